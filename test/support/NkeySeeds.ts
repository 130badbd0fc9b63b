import { createUser } from "@nats-io/nkeys"

/**
 * A well-formed user nkey seed whose text carries `marker` (base32 characters: A-Z, 2-7) right after its
 * `SUA` (the prefix every user seed has), so a test can look for the seed's leak by that marker.
 */
export const userSeedWith = (marker: string): string => {
  const real = new TextDecoder().decode(createUser().getSeed())
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  const wanted = `SUA${marker}${real.slice(3 + marker.length)}`.slice(0, 55)
  const bytes: Array<number> = []
  let buffer = 0
  let bits = 0
  for (const character of wanted) {
    buffer = (buffer << 5) | alphabet.indexOf(character)
    bits += 5
    if (bits >= 8) {
      bits -= 8
      bytes.push((buffer >> bits) & 0xff)
    }
  }
  const payload = Uint8Array.from(bytes.slice(0, 34))
  let crc = 0
  for (const byte of payload) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  const raw = Uint8Array.from([...payload, crc & 0xff, crc >> 8])
  let text = ""
  buffer = 0
  bits = 0
  for (const byte of raw) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      text += alphabet[(buffer >> bits) & 31]
    }
  }
  if (bits > 0) text += alphabet[(buffer << (5 - bits)) & 31]
  return text
}
