import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "@effect/vitest"
import { BodyBuffer, BodyBuffers } from "../../../src/kubeclient/rest/BodyBuffers.ts"

const bytes = (text: string) => Buffer.from(text, "utf8")

describe("BodyBuffer", () => {
  it("gathers chunks into one body, growing as they come", () => {
    const buffer = new BodyBuffer()
    const chunks = ['{"kind":', '"NodeList",', "x".repeat(40_000), '"items":[]}']
    for (const chunk of chunks) buffer.append(bytes(chunk))
    assert.strictEqual(buffer.bytes.toString("utf8"), chunks.join(""))
    assert.strictEqual(buffer.length, Buffer.byteLength(chunks.join("")))
    assert.isAtLeast(buffer.capacity, buffer.length)
  })

  it("keeps its room when cleared, so the next body is copied into the same memory", () => {
    const buffer = new BodyBuffer()
    buffer.append(Buffer.alloc(100_000, 1))
    const capacity = buffer.capacity
    buffer.clear()
    assert.strictEqual(buffer.length, 0)
    buffer.append(bytes("second"))
    assert.strictEqual(buffer.bytes.toString("utf8"), "second")
    assert.strictEqual(buffer.capacity, capacity)
  })

  it("makes the room a Content-Length announces at once, and copies nothing twice", () => {
    const buffer = new BodyBuffer()
    buffer.reserve(50_000)
    assert.strictEqual(buffer.capacity, 50_000)
    for (let at = 0; at < 50_000; at += 10_000) buffer.append(Buffer.alloc(10_000, at / 10_000))
    assert.strictEqual(buffer.capacity, 50_000)
    assert.strictEqual(buffer.bytes[49_999], 4)
  })

  it("keeps what was gathered when it grows past a reservation that was too small", () => {
    const buffer = new BodyBuffer()
    buffer.reserve(4)
    buffer.append(bytes("abcd"))
    buffer.append(bytes("efgh"))
    assert.strictEqual(buffer.bytes.toString("utf8"), "abcdefgh")
  })
})

describe("BodyBuffers", () => {
  const options = { kept: 2, largestKeptBytes: 64 * 1024, idleMs: 60_000 }

  it("hands a buffer given back to the next answer, empty", () => {
    const buffers = new BodyBuffers(options)
    const first = buffers.take()
    first.append(bytes("a page"))
    buffers.give(first)
    const second = buffers.take()
    assert.strictEqual(second, first)
    assert.strictEqual(second.length, 0)
  })

  it("keeps no more idle buffers than it is told, and none grown past the largest kept", () => {
    const buffers = new BodyBuffers(options)
    const taken = [buffers.take(), buffers.take(), buffers.take()]
    for (const buffer of taken) buffers.give(buffer)
    assert.strictEqual(buffers.idleCount, 2)
    const huge = new BodyBuffers(options).take()
    huge.append(Buffer.alloc(100_000))
    const holder = new BodyBuffers(options)
    holder.give(huge)
    assert.strictEqual(holder.idleCount, 0)
  })

  it("lets its idle buffers go once none was taken for a while", async () => {
    const buffers = new BodyBuffers({ ...options, idleMs: 20 })
    buffers.give(buffers.take())
    assert.strictEqual(buffers.idleCount, 1)
    // The release timer runs on the event loop: wait for it however busy the machine is.
    for (let waited = 0; buffers.idleCount > 0 && waited < 5_000; waited += 20) await sleep(20)
    assert.strictEqual(buffers.idleCount, 0)
  })
})
