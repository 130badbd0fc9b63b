import { assert, describe, it } from "@effect/vitest"
import { decodeKeyToken, encodeKeyToken, serialKey, uuidKey } from "../../../src/exporter/nats/GpuLocationKey.ts"

describe("KV keys of GPU locations", () => {
  it("keeps uuids and serials readable and within the KV key charset", () => {
    assert.strictEqual(
      uuidKey("GPU-1a2b3c4d-0000-1111-2222-333344445555"),
      "uuid.GPU-1a2b3c4d-0000-1111-2222-333344445555",
    )
    assert.strictEqual(serialKey("1654922031993", "GPU-1"), "serial.1654922031993.GPU-1")
    for (const key of [uuidKey("GPU with spaces/ä"), serialKey("0.1*>", "GPU=x")]) {
      assert.match(key, /^[-/_=.a-zA-Z0-9]+$/)
    }
  })

  it("encodes reversibly, empty included", () => {
    for (const value of ["", "a.b", "=41", "GPU-1", "ä ö", "x/y"]) {
      const token = encodeKeyToken(value)
      assert.strictEqual(token.includes("."), false)
      assert.strictEqual(decodeKeyToken(token), value)
    }
    assert.strictEqual(decodeKeyToken("=4"), undefined)
  })
})
