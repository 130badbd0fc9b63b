const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** RFC 4648 base32 without padding, as nkeys writes it; `undefined` for a character outside the alphabet. */
const base32Decode = (text: string): Uint8Array | undefined => {
  const bytes: Array<number> = []
  let buffer = 0
  let bits = 0
  for (const character of text) {
    const value = base32Alphabet.indexOf(character)
    if (value < 0) return undefined
    buffer = (buffer << 5) | value
    bits += 5
    if (bits >= 8) {
      bits -= 8
      bytes.push((buffer >> bits) & 0xff)
    }
  }
  return Uint8Array.from(bytes)
}

/** CRC-16/XMODEM (CCITT polynomial 0x1021, initial 0), the checksum nkeys ends every key with. */
const crc16 = (bytes: Uint8Array): number => {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

/**
 * What is wrong with a user nkey seed, as the server would only say at connection time ("authorization
 * violation"): it must start with `SU`, be base32, and carry the checksum of what it encodes in its last
 * two bytes (little-endian). Nothing when it is well formed.
 */
export const nkeySeedProblem = (seed: string): string | undefined => {
  if (!seed.startsWith("SU")) return "NATS nkey seed must be a user seed (starting with SU)"
  const raw = base32Decode(seed)
  if (raw === undefined || raw.length < 4) return "NATS nkey seed is not base32 (A-Z and 2-7)"
  const payload = raw.subarray(0, raw.length - 2)
  const checksum = (raw[raw.length - 2] ?? 0) | ((raw[raw.length - 1] ?? 0) << 8)
  return crc16(payload) === checksum
    ? undefined
    : "NATS nkey seed has a wrong checksum (a character was changed or lost)"
}
