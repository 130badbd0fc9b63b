import { assert, describe, it } from "@effect/vitest"
import {
  decodeSubjectToken,
  encodeSubjectToken,
  eventSubject,
  filterSubject,
} from "../../../src/exporter/nats/NatsSubject.ts"
import { addedEvent } from "../InventoryEvents.ts"

describe("NATS subjects", () => {
  it("keeps a node name with dots as one token and reads it back", () => {
    const token = encodeSubjectToken("ip-10-0-1-17.eu-west-1.compute.internal")
    assert.strictEqual(token, "ip-10-0-1-17%2Eeu-west-1%2Ecompute%2Einternal")
    assert.strictEqual(token.includes("."), false)
    assert.strictEqual(decodeSubjectToken(token), "ip-10-0-1-17.eu-west-1.compute.internal")
  })

  it("escapes wildcards, spaces, percent signs and non-ASCII reversibly", () => {
    for (const value of ["*", ">", "a b", "50%", "%2E", "zürich", "", "tab\there", "plain-name_1"]) {
      const token = encodeSubjectToken(value)
      assert.match(token, /^[^\s.*>]+$/)
      assert.strictEqual(decodeSubjectToken(token), value)
    }
    assert.strictEqual(encodeSubjectToken("plain-name_1"), "plain-name_1")
    assert.notStrictEqual(encodeSubjectToken("%2E"), encodeSubjectToken("."))
  })

  it("rejects tokens it never writes", () => {
    assert.strictEqual(decodeSubjectToken("%zz"), undefined)
    assert.strictEqual(decodeSubjectToken(""), undefined)
    assert.strictEqual(decodeSubjectToken("%C3"), undefined)
  })

  it("builds <prefix>.<cluster>.<node>.<event> and filters with wildcards", () => {
    const { record } = addedEvent(3)
    assert.strictEqual(eventSubject("gpu.serials", { ...record, node: "node.a" }), "gpu.serials.prod-eu.node%2Ea.added")
    assert.strictEqual(filterSubject("gpu.serials", {}), "gpu.serials.*.*.*")
    assert.strictEqual(filterSubject("gpu.serials", { node: "node.a", event: "moved" }), "gpu.serials.*.node%2Ea.moved")
  })
})
