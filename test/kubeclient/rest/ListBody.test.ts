import { assert, describe, it } from "@effect/vitest"
import { listOfBody } from "../../../src/kubeclient/rest/ListBody.ts"

/** A pod as the API server lists it: no kind or apiVersion of its own, metadata first. */
const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: {
    name,
    namespace: "gpu-operator",
    uid: `uid-${name}`,
    resourceVersion: "17",
    labels: { app: "nvidia-device-plugin-daemonset" },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: "nvidia-device-plugin-daemonset" }],
  },
  spec: {
    nodeName: `node-${name}`,
    volumes: [{ name: "config", configMap: { name: "plugin", items: [{ key: "a", path: "b" }] } }],
  },
  status: { phase: "Running", containerStatuses: [{ ready: true }] },
  ...extra,
})

const podList = (items: ReadonlyArray<unknown>, metadata: Record<string, unknown> = { resourceVersion: "4711" }) =>
  `${JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata, items })}\n`

/** The list as `listOfBody` reads it item by item, put together as one object again; undefined where it does not. */
const byItem = (body: string): unknown => {
  const list = listOfBody(Buffer.from(body, "utf8"), (item) => item)
  return list === undefined ? undefined : { ...list.head, items: list.items }
}

/** What the caller makes of a body: the list item by item where it can, else `JSON.parse` of the whole. */
const parsed = (body: string): unknown => byItem(body) ?? JSON.parse(body)

describe("listOfBody", () => {
  it("parses an API server's list item by item into what JSON.parse makes of it", () => {
    const body = podList([pod("a"), pod("ä-ö"), pod("c-🚀")], { resourceVersion: "4711", continue: "eyJydiI6NDcxMX0" })
    const list = byItem(body)
    assert.isDefined(list)
    assert.deepStrictEqual(list, JSON.parse(body))
    assert.deepStrictEqual(Object.keys(list ?? {}), ["kind", "apiVersion", "metadata", "items"])
  })

  it("hands each item to keep as it is parsed and keeps only what keep answers", () => {
    const body = podList([pod("a"), pod("b"), pod("c")])
    const seen: Array<unknown> = []
    const list = listOfBody(Buffer.from(body, "utf8"), (item) => {
      seen.push(item)
      return (item as { readonly metadata: { readonly name: string } }).metadata.name
    })
    assert.deepStrictEqual(list?.items, ["a", "b", "c"])
    assert.deepStrictEqual(seen, JSON.parse(body).items)
    assert.deepStrictEqual(list?.head, { kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "4711" } })
  })

  it("parses items that carry their own kind and apiVersion first, as the simulated cluster writes them", () => {
    const body = podList([
      { apiVersion: "v1", kind: "Pod", ...pod("a") },
      { apiVersion: "v1", kind: "Pod", ...pod("b") },
    ])
    assert.deepStrictEqual(byItem(body), JSON.parse(body))
  })

  it("parses a list of one item, and of none", () => {
    for (const body of [podList([pod("only")]), podList([]), '{"kind":"NodeList","metadata":{},"items":[]}']) {
      assert.deepStrictEqual(byItem(body), JSON.parse(body), body)
    }
  })

  it("is not misled by the items' meeting written inside a string", () => {
    const trap = '"},{"metadata":{"name":"x"}}]}'
    const body = podList([pod("a", { note: trap }), pod(trap), pod("c")])
    assert.deepStrictEqual(byItem(body), JSON.parse(body))
  })

  it("leaves a list whose items hold objects that start as the items do to the whole parse, and that parse is the same", () => {
    // Inside an item, `},{"metadata":` cuts a piece that is no JSON value: the body is parsed whole.
    const body = podList([
      pod("a", { templates: [{ metadata: { name: "t1" } }, { metadata: { name: "t2" } }] }),
      pod("b"),
    ])
    assert.isUndefined(byItem(body))
    assert.deepStrictEqual(parsed(body), JSON.parse(body))
  })

  it("answers nothing for bodies of another shape: items first or not last, pretty-printed, not objects, null", () => {
    const bodies = [
      JSON.stringify({ items: [pod("a"), pod("b")], kind: "PodList", metadata: { resourceVersion: "1" } }),
      JSON.stringify({ kind: "PodList", items: [pod("a"), pod("b")], metadata: { resourceVersion: "1" } }),
      JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "1" }, items: [pod("a"), pod("b")] }, null, 2),
      JSON.stringify({ kind: "List", metadata: {}, items: ["a", "b"] }),
      JSON.stringify({ kind: "List", metadata: {}, items: null }),
      JSON.stringify([pod("a")]),
    ]
    for (const body of bodies) {
      assert.isUndefined(byItem(body), body.slice(0, 60))
      assert.deepStrictEqual(parsed(body), JSON.parse(body))
    }
  })

  it("answers nothing for a body that is not JSON, so the whole parse reports it", () => {
    const body = podList([pod("a"), pod("b"), pod("c")])
    for (const broken of [
      body.slice(0, body.length / 2),
      body.replace('},{"metadata"', '},{"metadata"x'),
      `${body}x`,
    ]) {
      assert.isUndefined(byItem(broken))
      assert.throws(() => JSON.parse(broken))
    }
  })

  it("agrees with JSON.parse on generated lists with awkward strings and nesting", () => {
    let seed = 7
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed % below
    }
    const pieces = ['},{"metadata":', '"', "\\", "]}", "ä", "🚀", ",", "{", "}", "items", '\\"},{\\"metadata\\":', "\n"]
    const text = () => Array.from({ length: random(6) }, () => pieces[random(pieces.length)]).join("")
    const value = (depth: number): unknown => {
      switch (random(depth > 2 ? 3 : 6)) {
        case 0:
          return text()
        case 1:
          return random(1000) - 500
        case 2:
          return random(2) === 0
        case 3:
          return Array.from({ length: random(3) }, () => value(depth + 1))
        case 4:
          return { metadata: { name: text() }, [text()]: value(depth + 1) }
        default:
          return Object.fromEntries(Array.from({ length: random(3) }, () => [text(), value(depth + 1)]))
      }
    }
    let itemByItem = 0
    for (let round = 0; round < 300; round++) {
      const items = Array.from({ length: random(5) }, () => ({ metadata: { name: text() }, spec: value(0) }))
      const body = podList(items, { resourceVersion: String(round), continue: text() })
      const list = byItem(body)
      if (list !== undefined) itemByItem += 1
      assert.deepStrictEqual(list ?? JSON.parse(body), JSON.parse(body), body)
    }
    assert.isAbove(itemByItem, 150)
  })
})
