/** Characters a KV key token may hold as themselves; `.` separates tokens, `=` starts an escape. */
const plain = /^[-_a-zA-Z0-9]$/

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * A value as one KV key token, reversibly: letters, digits, `-` and `_` as themselves, every other
 * character as `=XX` of its UTF-8 bytes (KV keys allow only `[-/_=.a-zA-Z0-9]`); empty as a lone `=`.
 */
export const encodeKeyToken = (value: string): string => {
  if (value === "") return "="
  let token = ""
  for (const char of value) {
    if (plain.test(char)) token += char
    else for (const byte of encoder.encode(char)) token += `=${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return token
}

/** The value an `encodeKeyToken` token stands for; absent when the token is not one it writes. */
export const decodeKeyToken = (token: string): string | undefined => {
  if (token === "=") return ""
  if (token === "" || !/^(?:[-_a-zA-Z0-9]|=[0-9A-F]{2})+$/.test(token)) return undefined
  const bytes: Array<number> = []
  for (let index = 0; index < token.length; ) {
    if (token[index] === "=") {
      bytes.push(Number.parseInt(token.slice(index + 1, index + 3), 16))
      index += 3
    } else {
      bytes.push(token.charCodeAt(index))
      index += 1
    }
  }
  try {
    return decoder.decode(new Uint8Array(bytes))
  } catch {
    return undefined
  }
}

/**
 * The token of `cluster` in a key, or `*` (every cluster) when absent. Every key starts with its
 * cluster, so clusters sharing one bucket never write each other's keys.
 */
const clusterToken = (cluster: string | undefined): string => (cluster === undefined ? "*" : encodeKeyToken(cluster))

/** `<cluster>.uuid.<uuid>`: the current location and facts of one GPU of `cluster`. */
export const uuidKey = (cluster: string, uuid: string): string =>
  `${encodeKeyToken(cluster)}.uuid.${encodeKeyToken(uuid)}`

/** The `uuid.` keys of every GPU of `cluster`. */
export const clusterUuidKeys = (cluster: string): string => `${encodeKeyToken(cluster)}.uuid.*`

/** The `uuid.` keys of the GPU `uuid` in `cluster`, or in any cluster when absent. */
export const uuidKeys = (cluster: string | undefined, uuid: string): string =>
  `${clusterToken(cluster)}.uuid.${encodeKeyToken(uuid)}`

/**
 * `<cluster>.serial.<serial>.<uuid>`: the location of one GPU of `cluster` by its serial. A serial
 * shared by two GPUs (a GB200 module) has one key per GPU.
 */
export const serialKey = (cluster: string, serial: string, uuid: string): string =>
  `${encodeKeyToken(cluster)}.serial.${encodeKeyToken(serial)}.${encodeKeyToken(uuid)}`

/** The `serial.` keys of every GPU of `cluster`. */
export const clusterSerialKeys = (cluster: string): string => `${encodeKeyToken(cluster)}.serial.*.*`

/** The keys of every GPU with `serial` in `cluster`, or in any cluster when absent. */
export const serialKeys = (cluster: string | undefined, serial: string): string =>
  `${clusterToken(cluster)}.serial.${encodeKeyToken(serial)}.*`
