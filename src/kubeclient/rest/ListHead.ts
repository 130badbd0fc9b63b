/** What a list page's head says before its items arrive. */
export interface ListHead {
  readonly resourceVersion: string
  /** The next page's continue token; absent on the last page. */
  readonly continueToken: string | undefined
}

/** A head not found within this many bytes is not looked for further: the whole body decides. */
export const listHeadLimitBytes = 64 * 1024

/** The bytes that end a list's head: the key of its items, after the keys before them. */
const itemsKey = Buffer.from(',"items":', "utf8")

/**
 * Reads a list page's head from the first bytes of its body, so the next page can be asked for while the
 * items still stream in. The API server writes a list as its Go struct orders the fields: kind, apiVersion,
 * metadata (resourceVersion, continue), then items. Only a head of exactly that shape answers: the keys
 * before `,"items":` at the top level parse as a JSON object of their own (which a key inside a nested
 * object or a string can never make true) and hold a `metadata` object. A body with its items first, other
 * whitespace, or no such key within `listHeadLimitBytes` answers nothing; it is never guessed at.
 */
export class ListHeadReader {
  private buffered: Buffer = Buffer.alloc(0)
  private searchFrom = 0
  private finished = false

  /** Whether the head was found or given up on; later chunks are not looked at. */
  get done(): boolean {
    return this.finished
  }

  /** The head, once, by the chunk that completes it; `undefined` before, after, and for a body of another shape. */
  push(chunk: Buffer): ListHead | undefined {
    if (this.finished) return undefined
    const room = listHeadLimitBytes - this.buffered.length
    this.buffered = Buffer.concat([this.buffered, chunk.length > room ? chunk.subarray(0, room) : chunk])
    if (this.searchFrom === 0 && !this.startsAsObject()) {
      this.finished = true
      return undefined
    }
    let at = this.buffered.indexOf(itemsKey, this.searchFrom)
    while (at !== -1) {
      const head = headOf(this.buffered.toString("utf8", 0, at))
      if (head !== undefined) {
        this.finished = true
        return head
      }
      at = this.buffered.indexOf(itemsKey, at + 1)
    }
    this.searchFrom = Math.max(0, this.buffered.length - itemsKey.length + 1)
    if (this.buffered.length >= listHeadLimitBytes) this.finished = true
    return undefined
  }

  /** The body opens an object (its first byte that is not whitespace is `{`), or has shown nothing yet. */
  private startsAsObject(): boolean {
    for (const byte of this.buffered) {
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
      return byte === 0x7b
    }
    return true
  }
}

/** The head `keys` (`{"kind":…,"metadata":{…}`) describe, when they are a whole object's keys and hold metadata. */
const headOf = (keys: string): ListHead | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(`${keys}}`)
  } catch {
    return undefined
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const metadata = (parsed as { readonly metadata?: unknown }).metadata
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return undefined
  const { resourceVersion, continue: continueToken } = metadata as {
    readonly resourceVersion?: unknown
    readonly continue?: unknown
  }
  return {
    resourceVersion: typeof resourceVersion === "string" ? resourceVersion : "",
    continueToken: typeof continueToken === "string" && continueToken !== "" ? continueToken : undefined,
  }
}
