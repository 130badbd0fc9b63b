/**
 * The few DER encodings (ITU-T X.690) an X.509 certificate needs: lengths, integers, object identifiers,
 * strings, times, bit and octet strings, and constructed values. Each returns the complete encoding.
 */

const lengthOf = (length: number): Buffer => {
  if (length < 0x80) return Buffer.from([length])
  const bytes: Array<number> = []
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

/** A value of the given tag byte with its contents. */
export const tagged = (tag: number, contents: Buffer): Buffer =>
  Buffer.concat([Buffer.from([tag]), lengthOf(contents.length), contents])

export const sequence = (...values: ReadonlyArray<Buffer>): Buffer => tagged(0x30, Buffer.concat(values))

export const set = (...values: ReadonlyArray<Buffer>): Buffer => tagged(0x31, Buffer.concat(values))

/** A non-negative INTEGER from its big-endian bytes: leading zeros dropped, a zero added where the top bit is set. */
export const unsignedInteger = (bytes: Buffer): Buffer => {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  const trimmed = bytes.subarray(start)
  const first = trimmed[0] ?? 0
  return tagged(0x02, first >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : Buffer.from(trimmed))
}

export const smallInteger = (value: number): Buffer => unsignedInteger(Buffer.from([value]))

export const booleanTrue = (): Buffer => tagged(0x01, Buffer.from([0xff]))

export const objectIdentifier = (dotted: string): Buffer => {
  const arcs = dotted.split(".").map(Number)
  const [first = 0, second = 0, ...rest] = arcs
  const bytes: Array<number> = [first * 40 + second]
  for (const arc of rest) {
    const groups: Array<number> = [arc & 0x7f]
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      groups.unshift(0x80 | (value & 0x7f))
    bytes.push(...groups)
  }
  return tagged(0x06, Buffer.from(bytes))
}

export const utf8String = (text: string): Buffer => tagged(0x0c, Buffer.from(text, "utf8"))

/** UTCTime for years 1950–2049, GeneralizedTime after, as RFC 5280 §4.1.2.5 requires. */
export const time = (date: Date): Buffer => {
  const iso = date.toISOString()
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
  return date.getUTCFullYear() < 2050
    ? tagged(0x17, Buffer.from(digits.slice(2), "ascii"))
    : tagged(0x18, Buffer.from(digits, "ascii"))
}

/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (bytes: Buffer): Buffer => tagged(0x03, Buffer.concat([Buffer.from([0]), bytes]))

export const octetString = (bytes: Buffer): Buffer => tagged(0x04, bytes)

/** An explicit context-specific tag `[n]` around a value. */
export const explicit = (tag: number, value: Buffer): Buffer => tagged(0xa0 | tag, value)

/** An implicit context-specific primitive tag `[n]` (a SAN's dNSName, iPAddress, a key identifier). */
export const implicitPrimitive = (tag: number, contents: Buffer): Buffer => tagged(0x80 | tag, contents)

/** A BIT STRING of named bits (bit 0 is the first), trailing zero bits left out as DER requires. */
export const namedBits = (bits: ReadonlyArray<number>): Buffer => {
  const last = Math.max(...bits)
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1)
  for (const bit of bits) bytes[Math.floor(bit / 8)] = (bytes[Math.floor(bit / 8)] ?? 0) | (0x80 >> (bit % 8))
  return tagged(0x03, Buffer.concat([Buffer.from([7 - (last % 8)]), bytes]))
}
