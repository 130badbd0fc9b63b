import * as Schema from "effect/Schema"

/** One event of a watch as the API server sent it; `object` is checked by whoever reads it. */
export interface WatchEvent {
  readonly type: string
  readonly object: unknown
}

/** No Kubernetes object comes near this (etcd keeps at most 1.5 MB); a longer line is a broken stream. */
export const maxWatchLineBytes = 16 * 1024 * 1024

/** A watch line longer than `maxWatchLineBytes`. */
export class WatchLineTooLong extends Schema.TaggedError<WatchLineTooLong>()("WatchLineTooLong", {
  /** What the line held when it was refused. */
  bytes: Schema.Number,
}) {
  override get message(): string {
    return `a watch event is longer than ${maxWatchLineBytes} bytes`
  }
}

/** Splits the body of a watch, one JSON event per line, into events. */
export interface WatchEventLines {
  /** The next chunk of the body; throws `WatchLineTooLong` when a line grows past the cap. */
  readonly push: (chunk: Buffer) => void
  /** The body ended: a last line without its newline is an event too. */
  readonly end: () => void
}

const newline = 0x0a

/**
 * Reads newline-delimited watch events chunk by chunk. Each line becomes a fresh string (nothing keeps a
 * chunk once its lines are read); a line that is not a JSON event is skipped, as client-go does.
 */
export const watchEventLines = (onEvent: (event: WatchEvent) => void): WatchEventLines => {
  let pending: Array<Buffer> = []
  let pendingBytes = 0

  const emit = (line: string) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      return
    }
    if (typeof parsed === "object" && parsed !== null && "type" in parsed && typeof parsed.type === "string") {
      onEvent({ type: parsed.type, object: "object" in parsed ? parsed.object : undefined })
    }
  }

  const flush = (last: Buffer) => {
    pending.push(last)
    const line = Buffer.concat(pending, pendingBytes + last.length).toString("utf8")
    pending = []
    pendingBytes = 0
    emit(line)
  }

  return {
    push: (chunk) => {
      let start = 0
      let end = chunk.indexOf(newline)
      while (end !== -1) {
        if (pending.length === 0) {
          if (end > start) emit(chunk.toString("utf8", start, end))
        } else {
          flush(chunk.subarray(start, end))
        }
        start = end + 1
        end = chunk.indexOf(newline, start)
      }
      if (start < chunk.length) {
        const rest = chunk.length - start
        if (pendingBytes + rest > maxWatchLineBytes) {
          throw new WatchLineTooLong({ bytes: pendingBytes + rest })
        }
        // A copy: the partial line must not keep the whole chunk alive until its end arrives.
        pending.push(Buffer.from(chunk.subarray(start)))
        pendingBytes += rest
      }
    },
    end: () => {
      if (pending.length > 0) flush(Buffer.alloc(0))
    },
  }
}
