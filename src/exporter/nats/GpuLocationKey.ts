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

/** `uuid.<uuid>`: the current location and facts of one GPU. */
export const uuidKey = (uuid: string): string => `uuid.${encodeKeyToken(uuid)}`

/** Every `uuid.` key. */
export const uuidKeys = "uuid.>"

/**
 * `serial.<serial>.<uuid>`: the location of one GPU by its serial. A serial shared by two GPUs (a
 * GB200 module) has one key per GPU.
 */
export const serialKey = (serial: string, uuid: string): string =>
  `serial.${encodeKeyToken(serial)}.${encodeKeyToken(uuid)}`

/** The keys of every GPU with `serial`. */
export const serialKeys = (serial: string): string => `serial.${encodeKeyToken(serial)}.*`
