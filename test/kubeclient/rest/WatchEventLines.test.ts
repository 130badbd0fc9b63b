import { describe, expect, it } from "@effect/vitest"
import {
  maxWatchLineBytes,
  type WatchEvent,
  WatchLineTooLong,
  watchEventLines,
} from "../../../src/kubeclient/rest/WatchEventLines.ts"

const collect = () => {
  const events: Array<WatchEvent> = []
  return { events, lines: watchEventLines((event) => events.push(event)) }
}

const line = (type: string, name: string) => `${JSON.stringify({ type, object: { metadata: { name } } })}\n`

describe("watch event lines", () => {
  it("reads one event per line, several in a chunk", () => {
    const { events, lines } = collect()
    lines.push(Buffer.from(line("ADDED", "a") + line("MODIFIED", "b") + line("BOOKMARK", "c")))
    expect(events.map((event) => event.type)).toEqual(["ADDED", "MODIFIED", "BOOKMARK"])
    expect(events[1]?.object).toEqual({ metadata: { name: "b" } })
  })

  it("joins a line split across chunks, also inside a multi-byte character", () => {
    const { events, lines } = collect()
    const text = Buffer.from(line("ADDED", "nœud-é") + line("DELETED", "x"))
    const cut = text.indexOf(Buffer.from("é")) + 1
    lines.push(text.subarray(0, 5))
    lines.push(text.subarray(5, cut))
    expect(events).toEqual([])
    lines.push(text.subarray(cut))
    expect(events.map((event) => event.object)).toEqual([{ metadata: { name: "nœud-é" } }, { metadata: { name: "x" } }])
  })

  it("skips blank lines and lines that are not JSON events", () => {
    const { events, lines } = collect()
    lines.push(Buffer.from(`\n{not json\n${JSON.stringify({ object: {} })}\n[1]\n${line("ADDED", "a")}`))
    expect(events.map((event) => event.type)).toEqual(["ADDED"])
  })

  it("reads a last line without its newline when the body ends", () => {
    const { events, lines } = collect()
    lines.push(Buffer.from(line("ADDED", "a").trimEnd()))
    expect(events).toEqual([])
    lines.end()
    expect(events.map((event) => event.type)).toEqual(["ADDED"])
  })

  it("refuses a line longer than any Kubernetes object", () => {
    const { lines } = collect()
    const chunk = Buffer.alloc(1024 * 1024, 0x20)
    expect(() => {
      for (let sent = 0; sent <= maxWatchLineBytes; sent += chunk.length) lines.push(chunk)
    }).toThrow(WatchLineTooLong)
  })
})
