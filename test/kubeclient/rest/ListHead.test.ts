import { assert, describe, it } from "@effect/vitest"
import { type ListHead, ListHeadReader, listHeadLimitBytes } from "../../../src/kubeclient/rest/ListHead.ts"

const node = (name: string) => ({ metadata: { name, labels: { "gpu.example/items": '","items":[' } } })

/** Feeds `body` to a new reader in chunks of `size` bytes; answers each head it gave and after which chunk. */
const readInChunks = (body: string, size: number) => {
  const bytes = Buffer.from(body, "utf8")
  const reader = new ListHeadReader()
  const heads: Array<{ readonly head: ListHead; readonly endsAt: number }> = []
  for (let at = 0; at < bytes.length; at += size) {
    const head = reader.push(bytes.subarray(at, at + size))
    if (head !== undefined) heads.push({ head, endsAt: Math.min(at + size, bytes.length) })
  }
  return { heads, done: reader.done }
}

const apiServerList = JSON.stringify({
  kind: "NodeList",
  apiVersion: "v1",
  metadata: { resourceVersion: "4711", continue: "eyJydiI6NDcxMSwic3RhcnQiOiJub2RlLTEifQ", remainingItemCount: 2 },
  items: [node("node-1"), node("node-ä"), node("node-3")],
})

describe("ListHeadReader", () => {
  it("reads the continue token from a list whose metadata comes before its items, in any chunking", () => {
    const itemsAt = apiServerList.indexOf('"items":') + '"items":'.length
    for (const size of [1, 2, 7, 64, 1024]) {
      const { heads, done } = readInChunks(apiServerList, size)
      assert.deepStrictEqual(
        heads.map(({ head }) => head),
        [{ resourceVersion: "4711", continueToken: "eyJydiI6NDcxMSwic3RhcnQiOiJub2RlLTEifQ" }],
        `chunks of ${size}`,
      )
      // Answered by the chunk that brought the items' key, before any item.
      assert.isAtMost(heads[0]?.endsAt ?? Number.POSITIVE_INFINITY, itemsAt + size, `chunks of ${size}`)
      assert.isTrue(done)
    }
  })

  it("answers a last page's head without a continue token", () => {
    const last = JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "9" }, items: [] })
    assert.deepStrictEqual(
      readInChunks(last, 5).heads.map(({ head }) => head),
      [{ resourceVersion: "9", continueToken: undefined }],
    )
    const emptyToken = last.replace('"resourceVersion":"9"', '"resourceVersion":"9","continue":""')
    assert.deepStrictEqual(
      readInChunks(emptyToken, 5).heads.map(({ head }) => head),
      [{ resourceVersion: "9", continueToken: undefined }],
    )
  })

  it("answers nothing for a body whose items come before the metadata", () => {
    const itemsFirst = JSON.stringify({
      items: [node("node-1"), node("node-2")],
      kind: "NodeList",
      apiVersion: "v1",
      metadata: { resourceVersion: "4711", continue: "next" },
    })
    for (const size of [1, 16, 4096]) {
      assert.deepStrictEqual(readInChunks(itemsFirst, size).heads, [], `chunks of ${size}`)
    }
    const itemsBetween = JSON.stringify({
      kind: "NodeList",
      items: [node("node-1")],
      metadata: { resourceVersion: "4711", continue: "next" },
    })
    assert.deepStrictEqual(readInChunks(itemsBetween, 3).heads, [])
  })

  it("is not misled by an items key inside the metadata", () => {
    const nested = `{"kind":"NodeList","metadata":{"resourceVersion":"1","x":{"a":1,"items":[]},"continue":"real"},"items":[]}`
    assert.deepStrictEqual(
      readInChunks(nested, 4).heads.map(({ head }) => head),
      [{ resourceVersion: "1", continueToken: "real" }],
    )
  })

  it("answers nothing for a head without metadata, another layout, or something that is not an object", () => {
    const bodies = [
      `{"kind":"NodeList","apiVersion":"v1","items":[]}`,
      `{"kind":"NodeList","metadata":"no object","items":[]}`,
      `{\n  "kind": "NodeList",\n  "metadata": {"continue": "next"},\n  "items": []\n}`,
      `[{"metadata":{"continue":"next"},"items":[]}]`,
      `{"status":"Failure","message":"no"}`,
    ]
    for (const body of bodies) {
      assert.deepStrictEqual(readInChunks(body, 3).heads, [], body)
    }
  })

  it("stops looking after its limit, so a body of another shape costs a bounded buffer", () => {
    const padding = "x".repeat(listHeadLimitBytes)
    const late = `{"kind":"NodeList","padding":"${padding}","metadata":{"continue":"next"},"items":[]}`
    const { heads, done } = readInChunks(late, 8192)
    assert.deepStrictEqual(heads, [])
    assert.isTrue(done)
  })
})
