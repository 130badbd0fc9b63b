import { assert, describe, it } from "@effect/vitest"
import {
  decodeKeyToken,
  encodeKeyToken,
  serialKey,
  serialKeys,
  uuidKey,
  uuidKeys,
} from "../../../src/exporter/nats/GpuLocationKey.ts"

describe("KV keys of GPU locations", () => {
  it("keeps uuids and serials readable and within the KV key charset", () => {
    assert.strictEqual(
      uuidKey("prod-eu", "GPU-1a2b3c4d-0000-1111-2222-333344445555"),
      "prod-eu.uuid.GPU-1a2b3c4d-0000-1111-2222-333344445555",
    )
    assert.strictEqual(serialKey("prod-eu", "1654922031993", "GPU-1"), "prod-eu.serial.1654922031993.GPU-1")
    for (const key of [uuidKey("eu.west 1", "GPU with spaces/ä"), serialKey("*", "0.1*>", "GPU=x")]) {
      assert.match(key, /^[-/_=.a-zA-Z0-9]+$/)
    }
  })

  it("puts the cluster first, as one token, and searches every cluster when none is named", () => {
    assert.strictEqual(uuidKey("eu.west", "GPU-1"), "eu=2Ewest.uuid.GPU-1")
    assert.strictEqual(uuidKeys(undefined, "GPU-1"), "*.uuid.GPU-1")
    assert.strictEqual(uuidKeys("eu.west", "GPU-1"), "eu=2Ewest.uuid.GPU-1")
    assert.strictEqual(serialKeys(undefined, "1654922031993"), "*.serial.1654922031993.*")
    assert.strictEqual(serialKeys("prod-us", "1654922031993"), "prod-us.serial.1654922031993.*")
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
