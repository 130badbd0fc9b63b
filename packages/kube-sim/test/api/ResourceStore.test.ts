import { describe, expect, it } from "vitest"
import { namespaces, pods } from "../../src/api/ResourceKind.ts"
import { ResourceStore, type StoreEvent } from "../../src/api/ResourceStore.ts"

const newStore = (historyLimit = 100) => {
  let counter = 0
  const store = new ResourceStore({
    historyLimit,
    newUid: () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`,
    newNameSuffix: () => `x${++counter}`,
    now: () => new Date("2026-01-02T03:04:05Z"),
  })
  store.create(namespaces, { metadata: { name: "gpu-operator" } })
  return store
}

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { nodeName: "n" },
})

describe("the resource store", () => {
  it("gives every commit the next global resourceVersion and lists in key order", () => {
    const store = newStore()
    const start = store.currentRevision
    const b = store.create(pods, pod("b"), "gpu-operator")
    const a = store.create(pods, pod("a"), "gpu-operator")
    expect([b.resourceVersion, a.resourceVersion]).toEqual([start + 1, start + 2])
    expect(store.list(pods, "gpu-operator").map((stored) => stored.name)).toEqual(["a", "b"])
    expect(b.object.metadata).toMatchObject({ namespace: "gpu-operator", resourceVersion: String(start + 1) })
  })

  it("keeps each object's bytes in a buffer of their own, not a slice of a shared pool the history would hold", () => {
    const store = newStore()
    const stored = [1, 2, 3].map((n) => store.create(pods, pod(`p${n}`), "gpu-operator"))
    for (const { bytes, json } of stored) {
      expect(bytes.toString("utf8")).toBe(json)
      expect(bytes.buffer.byteLength).toBe(bytes.length)
    }
  })

  it("rejects a stale update with 409 and keeps an unchanged object's resourceVersion", () => {
    const store = newStore()
    const created = store.create(pods, pod("a"), "gpu-operator")
    const updated = store.update(
      pods,
      { ...structuredClone(created.object), spec: { nodeName: "m" } },
      created.resourceVersion,
    )
    expect(updated.resourceVersion).toBeGreaterThan(created.resourceVersion)
    expect(() => store.update(pods, structuredClone(created.object), created.resourceVersion)).toThrow(
      /the object has been modified/,
    )
    expect(store.update(pods, structuredClone(updated.object)).resourceVersion).toBe(updated.resourceVersion)
  })

  it("replays events after a revision and answers 410 once they are compacted away", () => {
    const store = newStore(20)
    const events: StoreEvent[] = []
    store.subscribe(pods, (event) => events.push(event))
    const created = store.create(pods, pod("a"), "gpu-operator")
    store.update(pods, { ...structuredClone(created.object), spec: { nodeName: "m" } })
    store.delete(pods, "gpu-operator", "a")
    expect(events.map((event) => event.type)).toEqual(["ADDED", "MODIFIED", "DELETED"])
    expect(store.eventsSince(pods, created.resourceVersion).map((event) => event.type)).toEqual(["MODIFIED", "DELETED"])
    for (let index = 0; index < 40; index++) store.create(pods, pod(`p${index}`), "gpu-operator")
    expect(() => store.eventsSince(pods, created.resourceVersion)).toThrow(/too old resource version/)
  })

  it("rebuilds the list as it was at an earlier revision", () => {
    const store = newStore()
    store.create(pods, pod("a"), "gpu-operator")
    const revision = store.currentRevision
    store.create(pods, pod("b"), "gpu-operator")
    store.delete(pods, "gpu-operator", "a")
    expect(store.list(pods).map((stored) => stored.name)).toEqual(["b"])
    expect(store.listAt(pods, revision).map((stored) => stored.name)).toEqual(["a"])
    store.compact()
    expect(() => store.listAt(pods, revision)).toThrow(/too old resource version/)
  })

  it("refuses objects in a namespace that does not exist", () => {
    expect(() => newStore().create(pods, pod("a"), "nowhere")).toThrow(/namespaces "nowhere" not found/)
  })
})
