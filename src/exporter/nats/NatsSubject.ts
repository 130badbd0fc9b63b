import type { GpuRecord } from "../../domain/GpuRecord.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** Printable ASCII that may stand in a subject token as itself: everything but `%`, `.`, `*` and `>`. */
const isPlain = (code: number): boolean =>
  code > 0x20 && code < 0x7f && code !== 0x25 && code !== 0x2e && code !== 0x2a && code !== 0x3e

const hex = (byte: number): string => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`

/** How an empty value is written: a lone `%`, which no encoded value can produce otherwise. */
const emptyToken = "%"

/**
 * A value as one subject token, reversibly: `%`, `.`, `*`, `>`, spaces, control characters and
 * non-ASCII are written as `%XX` of their UTF-8 bytes, so a node name with dots stays one token and
 * no value can become a wildcard. `gpu-node-1.eu` becomes `gpu-node-1%2Eeu`.
 */
export const encodeSubjectToken = (value: string): string => {
  if (value === "") return emptyToken
  let token = ""
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0
    if (isPlain(code)) token += char
    else for (const byte of encoder.encode(char)) token += hex(byte)
  }
  return token
}

/** The value an `encodeSubjectToken` token stands for; absent when the token is not one it writes. */
export const decodeSubjectToken = (token: string): string | undefined => {
  if (token === emptyToken) return ""
  if (token === "" || !/^(?:[^%]|%[0-9A-F]{2})*$/.test(token)) return undefined
  const bytes: Array<number> = []
  let index = 0
  while (index < token.length) {
    if (token[index] === "%") {
      bytes.push(Number.parseInt(token.slice(index + 1, index + 3), 16))
      index += 3
    } else {
      for (const byte of encoder.encode(token[index])) bytes.push(byte)
      index += 1
    }
  }
  try {
    return decoder.decode(new Uint8Array(bytes))
  } catch {
    return undefined
  }
}

/** Where one record is published: `<prefix>.<cluster>.<node>.<event>`, cluster and node encoded. */
export const eventSubject = (prefix: string, record: GpuRecord): string =>
  `${prefix}.${encodeSubjectToken(record.cluster)}.${encodeSubjectToken(record.node)}.${record.event}`

/** What a subscriber filters on; an absent part matches any value (`*`). */
export interface SubjectFilter {
  readonly cluster?: string
  readonly node?: string
  readonly event?: string
}

/** The subject that matches the events of `filter` under `prefix`. */
export const filterSubject = (prefix: string, filter: SubjectFilter): string =>
  [
    prefix,
    filter.cluster === undefined ? "*" : encodeSubjectToken(filter.cluster),
    filter.node === undefined ? "*" : encodeSubjectToken(filter.node),
    filter.event ?? "*",
  ].join(".")

/** Every subject the exporter publishes to under `prefix`, as a stream subject. */
export const streamSubject = (prefix: string): string => `${prefix}.>`

/**
 * Where a cluster's heartbeat is published: `<prefix>.<cluster>.heartbeat`, one token fewer than any event
 * subject, so no node's events can match it and `tail`'s filters never see it; the stream captures it.
 */
export const heartbeatSubject = (prefix: string, cluster: string): string =>
  `${prefix}.${encodeSubjectToken(cluster)}.heartbeat`
