import { describe, expect, it } from "vitest"
import {
  gpuHistoryPath,
  gpuListPath,
  isEmptySearch,
  locationOf,
  nodePath,
  type View,
  viewOf,
  withFilter,
} from "../../../src/fleet/page/PageState.ts"

const fromLocation = (location: string): View => {
  const url = new URL(location, "http://fleet.test")
  return viewOf(url.pathname, url.search)
}

describe("the page's URL state", () => {
  it("reads a GPU, a node and a search from the URL", () => {
    expect(fromLocation("/gpus/GPU-1234")).toEqual({ kind: "gpu", uuid: "GPU-1234" })
    expect(fromLocation("/nodes/gpu-node-07")).toEqual({ kind: "node", name: "gpu-node-07" })
    expect(fromLocation("/?q=1652&health=failed")).toEqual({ kind: "home", search: { q: "1652", health: "failed" } })
    expect(fromLocation("/?cluster=west&q=1652")).toEqual({ kind: "home", search: { q: "1652", cluster: "west" } })
    expect(fromLocation("/nodes/east%2Fgpu-node-07")).toEqual({ kind: "node", name: "east/gpu-node-07" })
  })

  it("drops blank and unknown parameters and trims values", () => {
    expect(fromLocation("/?q=%20&node=&limit=5&chassis=%20C1%20")).toEqual({ kind: "home", search: { chassis: "C1" } })
  })

  it("shows the home view for an unknown path or a malformed segment, never a throw", () => {
    expect(fromLocation("/elsewhere?q=x")).toEqual({ kind: "home", search: { q: "x" } })
    expect(viewOf("/nodes/%E0%A4%A", "")).toEqual({ kind: "home", search: {} })
    expect(viewOf("/gpus/a/b", "")).toEqual({ kind: "home", search: {} })
  })

  it("writes a location that reads back as the same view, for names that need escaping", () => {
    const views: ReadonlyArray<View> = [
      { kind: "home", search: {} },
      { kind: "home", search: { q: "GPU-ab cd", model: "H100 80GB", health: "failed,degraded" } },
      { kind: "gpu", uuid: "GPU-5fe8a0c4-0d3e-4b6c/?#%" },
      { kind: "node", name: "node a/b?c#d" },
    ]
    for (const view of views) expect(fromLocation(locationOf(view))).toEqual(view)
  })

  it("writes the filters in one fixed order, so the same search always has the same link", () => {
    expect(locationOf({ kind: "home", search: { health: "failed", q: "16" } })).toBe("/?q=16&health=failed")
    expect(locationOf({ kind: "home", search: {} })).toBe("/")
  })

  it("asks the API for one page of the search, from a cursor", () => {
    expect(gpuListPath({ q: "node 1", health: "failed,degraded" }, 100)).toBe(
      "/api/v1/gpus?q=node+1&health=failed%2Cdegraded&limit=100",
    )
    expect(gpuListPath({}, 1000, "abc=")).toBe("/api/v1/gpus?limit=1000&cursor=abc%3D")
    expect(gpuHistoryPath("GPU-1/2")).toBe("/api/v1/gpus/GPU-1%2F2/history")
    expect(nodePath("n 1")).toBe("/api/v1/nodes/n%201")
  })

  it("sets and removes one filter", () => {
    const search = withFilter({ q: "16" }, "node", " n1 ")
    expect(search).toEqual({ q: "16", node: "n1" })
    expect(withFilter(search, "q", "  ")).toEqual({ node: "n1" })
    expect(isEmptySearch(withFilter(withFilter(search, "q", ""), "node", ""))).toBe(true)
    expect(isEmptySearch(search)).toBe(false)
  })
})
