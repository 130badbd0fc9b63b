/**
 * Where a sourced message of the hub stream came from: the source (the origin stream's name and the hash
 * of its domain, as the server names it) and the message's sequence in the origin stream.
 */
export interface SourcePosition {
  readonly source: string
  readonly sequence: number
}

/**
 * Reads the `Nats-Stream-Source` header a stream puts on each message it sources: `<source> <sequence>`,
 * followed on nats-server 2.10 and later by the source's filter and transform. Undefined for a message
 * not sourced (no header) or a header that does not read so.
 */
export const sourcePosition = (header: string | undefined): SourcePosition | undefined => {
  if (header === undefined) return undefined
  const [source, sequence] = header.trim().split(/\s+/)
  if (source === undefined || source === "" || sequence === undefined || !/^[0-9]+$/.test(sequence)) return undefined
  const parsed = Number(sequence)
  return Number.isSafeInteger(parsed) && parsed > 0 ? { source, sequence: parsed } : undefined
}

/** The origin sequence applied up to, by source: a message at or below its source's mark was applied. */
export type SourceMarks = ReadonlyMap<string, number>

/** Whether the message at `position` was applied before, by its source's mark. */
export const appliedBefore = (marks: SourceMarks, position: SourcePosition): boolean =>
  position.sequence <= (marks.get(position.source) ?? 0)
