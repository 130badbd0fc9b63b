import { constants } from "node:fs"
import { open, stat } from "node:fs/promises"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { formatByteSize } from "../config/ByteSize.ts"
import { defectMessage } from "../log/ShortMessage.ts"

/** The largest config file read: far above any real one, small enough that reading it costs nothing. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024

const CHUNK_BYTES = 64 * 1024

const readTimeout = "10 seconds"

/** The config file cannot be read; `reason` ends the sentence `cannot read config file <path>: `. */
export class ConfigFileUnreadable extends Schema.TaggedError<ConfigFileUnreadable>()("ConfigFileUnreadable", {
  path: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `cannot read config file ${this.path}: ${this.reason}`
  }
}

const tooLarge = `is larger than the ${formatByteSize(MAX_CONFIG_FILE_BYTES)} a config file may have`

const kindOf = (stats: { isDirectory(): boolean; isFile(): boolean }): string | undefined =>
  stats.isDirectory()
    ? "is a directory"
    : stats.isFile()
      ? undefined
      : "is not a regular file (a device, FIFO or socket)"

class Refused {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

const readBounded = async (path: string): Promise<string> => {
  // Checked before opening: opening a FIFO would wait for a writer, reading a device would never end.
  const before = await stat(path)
  const refusedKind = kindOf(before)
  if (refusedKind !== undefined) throw new Refused(refusedKind)
  if (before.size > MAX_CONFIG_FILE_BYTES) throw new Refused(tooLarge)
  // Non-blocking, and checked again on the opened file, in case the path was replaced in between.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const opened = kindOf(await handle.stat())
    if (opened !== undefined) throw new Refused(opened)
    const chunks: Array<Buffer> = []
    let length = 0
    while (length <= MAX_CONFIG_FILE_BYTES) {
      const chunk = Buffer.alloc(CHUNK_BYTES)
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, length)
      if (bytesRead === 0) break
      chunks.push(chunk.subarray(0, bytesRead))
      length += bytesRead
    }
    // A file that grew past the cap after the first check.
    if (length > MAX_CONFIG_FILE_BYTES) throw new Refused(tooLarge)
    return Buffer.concat(chunks).toString("utf8")
  } finally {
    await handle.close()
  }
}

const reasonOf = (cause: unknown): string => {
  if (cause instanceof Refused) return cause.reason
  const code = cause instanceof Error && "code" in cause ? cause.code : undefined
  if (code === "ENOENT") return "no such file"
  if (code === "EACCES") return "permission denied"
  if (code === "ENOTDIR") return "a part of the path is not a directory"
  return defectMessage(cause)
}

/**
 * Reads the config file as text: a regular file of at most `MAX_CONFIG_FILE_BYTES`. A directory, a
 * device, a FIFO or a larger file is refused at once, without reading it.
 */
export const readConfigFileText = (path: string): Effect.Effect<string, ConfigFileUnreadable> =>
  Effect.tryPromise({
    try: () => readBounded(path),
    catch: (cause) => new ConfigFileUnreadable({ path, reason: reasonOf(cause) }),
  }).pipe(
    Effect.timeoutOrElse({
      duration: readTimeout,
      orElse: () => Effect.fail(new ConfigFileUnreadable({ path, reason: "read timed out" })),
    }),
  )
