import { readFileSync } from "node:fs"
import { type InspectorCall, type ServiceProcess, withInspector } from "./ServiceProcess.ts"

/**
 * What the service's memory is made of at one moment, sampled while it runs without forcing a garbage
 * collection: the resident set from /proc (anonymous pages against file-backed ones: the binary and
 * libraries), V8's heap space by space (committed: the pages V8 holds; used: the objects in them, dead ones
 * included until the next collection), and the memory outside the heap that V8 is told of.
 */
export interface MemorySample {
  /** Milliseconds since the service was spawned. */
  readonly atMs: number
  readonly rssMegabytes: number
  /** Anonymous resident pages (`/proc/<pid>/smaps_rollup`): V8's heap, malloc, thread stacks. */
  readonly anonymousMegabytes: number
  readonly spaces: ReadonlyArray<HeapSpaceSample>
  /** Memory outside V8's heap that objects in it hold (`process.memoryUsage().external`), array buffers included. */
  readonly externalMegabytes: number
  /** Of that, the backing stores of ArrayBuffers and Buffers. */
  readonly arrayBuffersMegabytes: number
  /** What V8 itself has from malloc outside its heap (the parser's and compiler's zones, ...), now and at most so far. */
  readonly v8MallocedMegabytes: number
  readonly v8PeakMallocedMegabytes: number
}

export interface HeapSpaceSample {
  /** V8's name for the space, e.g. `new_space`, `old_space`, `large_object_space`. */
  readonly name: string
  readonly committedMegabytes: number
  readonly usedMegabytes: number
}

const megabytes = (bytes: number): number => bytes / 1024 / 1024

/** Evaluated in the service: its heap spaces and external memory, in bytes, with no garbage collection. */
const heapExpression =
  "(() => { const m = process.memoryUsage(); const v8 = process.getBuiltinModule('node:v8'); const h = v8.getHeapStatistics(); " +
  "return { spaces: v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size, s.space_used_size]), " +
  "external: m.external, arrayBuffers: m.arrayBuffers, malloced: h.malloced_memory, peakMalloced: h.peak_malloced_memory } })()"

interface HeapAnswer {
  readonly spaces: ReadonlyArray<readonly [string, number, number]>
  readonly external: number
  readonly arrayBuffers: number
  readonly malloced: number
  readonly peakMalloced: number
}

/** A field of `/proc/<pid>/smaps_rollup` or `/proc/<pid>/status`, in megabytes (the files give kB). */
const procField = (text: string, field: string): number => {
  const line = text.split("\n").find((entry) => entry.startsWith(`${field}:`))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

const sampleOnce = async (service: ServiceProcess, call: InspectorCall): Promise<MemorySample | undefined> => {
  const pid = service.child.pid ?? 0
  const evaluated = await call("Runtime.evaluate", { expression: heapExpression, returnByValue: true })
  const heap = (evaluated.result as { value?: HeapAnswer } | undefined)?.value
  if (heap === undefined) return undefined
  // Read right after V8's figures, so both describe the same moment within a millisecond or so.
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  return {
    atMs: performance.now() - service.startedAt,
    rssMegabytes: procField(rollup, "Rss"),
    anonymousMegabytes: procField(rollup, "Anonymous"),
    spaces: heap.spaces.map(([name, committed, used]) => ({
      name,
      committedMegabytes: megabytes(committed),
      usedMegabytes: megabytes(used),
    })),
    externalMegabytes: megabytes(heap.external),
    arrayBuffersMegabytes: megabytes(heap.arrayBuffers),
    v8MallocedMegabytes: megabytes(heap.malloced),
    v8PeakMallocedMegabytes: megabytes(heap.peakMalloced),
  }
}

/** A sampler running beside the service; `stop` ends it and gives its samples, oldest first. */
export interface MemorySampler {
  readonly stop: () => Promise<ReadonlyArray<MemorySample>>
}

/**
 * Samples the service's memory every `intervalMs` (after each answer, so a busy service is asked less often)
 * through one inspector session, until `stop`. A sample the service does not answer in time ends the
 * sampling with what it has; the samples never fail the bench.
 */
export const startMemorySampler = (service: ServiceProcess, intervalMs: number): MemorySampler => {
  const samples: Array<MemorySample> = []
  let stopped = false
  let wake: (() => void) | undefined
  const running = withInspector(service, async (call) => {
    while (!stopped && service.child.exitCode === null) {
      const sample = await sampleOnce(service, call)
      if (sample !== undefined) samples.push(sample)
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, intervalMs)
      })
    }
  }).catch(() => undefined)
  return {
    stop: async () => {
      stopped = true
      wake?.()
      await running
      return samples
    },
  }
}

/** The V8 heap's committed pages in a sample, all spaces together. */
export const heapCommittedMegabytes = (sample: MemorySample): number =>
  sample.spaces.reduce((sum, space) => sum + space.committedMegabytes, 0)

/** How V8 names its spaces in the breakdown: short, in the order they matter here. */
const spaceLabels: ReadonlyArray<readonly [string, string]> = [
  ["new_space", "new"],
  ["old_space", "old"],
  ["large_object_space", "large objects"],
  ["new_large_object_space", "new large objects"],
  ["code_space", "code"],
  ["code_large_object_space", "large code"],
  ["trusted_space", "trusted"],
  ["trusted_large_object_space", "large trusted"],
]

/**
 * One sample as the bench prints it: RSS, its anonymous part split into V8's committed heap (space by space,
 * committed / used), array buffers and the rest (malloc: TLS, sockets, V8's compiler; thread stacks), and the
 * file-backed rest (the binary, libraries).
 */
export const memoryBreakdown = (sample: MemorySample): string => {
  const fixed = (value: number): string => value.toFixed(1)
  const committed = heapCommittedMegabytes(sample)
  const named = new Set(spaceLabels.map(([name]) => name))
  const spaces = spaceLabels.flatMap(([name, label]) => {
    const space = sample.spaces.find((candidate) => candidate.name === name)
    return space === undefined || space.committedMegabytes === 0
      ? []
      : [`${label} ${fixed(space.committedMegabytes)} / ${fixed(space.usedMegabytes)}`]
  })
  const others = sample.spaces.filter((space) => !named.has(space.name))
  const otherSpaces = others.reduce((sum, space) => sum + space.committedMegabytes, 0)
  if (otherSpaces > 0) spaces.push(`others ${fixed(otherSpaces)}`)
  const native = sample.anonymousMegabytes - committed - sample.arrayBuffersMegabytes
  return (
    `RSS ${fixed(sample.rssMegabytes)} MB at ${(sample.atMs / 1000).toFixed(1)} s: anonymous ${fixed(sample.anonymousMegabytes)} MB = ` +
    `V8 heap ${fixed(committed)} committed (${spaces.join(", ")}; MB committed / used) + array buffers ${fixed(sample.arrayBuffersMegabytes)} ` +
    `+ other native ${fixed(native)} (malloc, stacks; V8's own malloc ${fixed(sample.v8MallocedMegabytes)}, at most ${fixed(sample.v8PeakMallocedMegabytes)} so far); file-backed ${fixed(sample.rssMegabytes - sample.anonymousMegabytes)} MB; ` +
    `external ${fixed(sample.externalMegabytes)} MB`
  )
}
