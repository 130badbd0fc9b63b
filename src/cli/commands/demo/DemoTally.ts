import { formatGoDuration } from "../../../config/GoDuration.ts"
import { type HealthState, healthStates } from "../../../domain/GpuHealth.ts"
import type { InventoryEvent } from "../../../domain/InventoryEvent.ts"
import type { InventoryEventKind } from "../../../domain/InventoryEventKind.ts"
import type { NodeObservation } from "../../../domain/NodeObservation.ts"
import { sliceSourceNamespace } from "../../../receiver/kube/dra/DraNodes.ts"

const shownKinds: ReadonlyArray<InventoryEventKind> = ["added", "moved", "removed", "observed", "health"]

/** What the demo saw, for its progress lines and its closing summary. */
export class DemoTally {
  /** Whether the service reads NVIDIA's DRA driver: nodes are then gone only with their ResourceSlices. */
  private readonly dra: boolean
  private readonly nodesRead = new Set<string>()
  /** DRA nodes whose last reading came from their ResourceSlices alone, without serials. */
  private readonly sliceOnlyNodes = new Set<string>()
  private readonly gpus = new Set<string>()
  /** GPUs the inventory holds now, by UUID, with their node: from the events, as a consumer of them knows. */
  private readonly known = new Map<string, string>()
  /** The last health state the events gave each known GPU that reports one. */
  private readonly health = new Map<string, HealthState>()
  private readonly failedNodes = new Map<string, Set<string>>()
  private readonly goneNodes = new Set<string>()
  private readonly events = new Map<InventoryEventKind, number>()
  private readings = 0
  private failedReadings = 0

  constructor(options: { readonly dra: boolean } = { dra: false }) {
    this.dra = options.dra
  }

  observe(observation: NodeObservation): void {
    switch (observation._tag) {
      case "NodeRead":
        this.readings++
        this.nodesRead.add(observation.node.name)
        if (observation.pod.namespace === sliceSourceNamespace) this.sliceOnlyNodes.add(observation.node.name)
        else this.sliceOnlyNodes.delete(observation.node.name)
        for (const gpu of observation.reading.gpus) this.gpus.add(gpu.uuid)
        return
      case "NodeReadFailed": {
        this.failedReadings++
        const nodes = this.failedNodes.get(observation.failure.kind) ?? new Set<string>()
        nodes.add(observation.node.name)
        this.failedNodes.set(observation.failure.kind, nodes)
        return
      }
      case "NodeGone":
        this.goneNodes.add(observation.node.name)
        return
      case "ClusterListed":
        return
    }
  }

  observeEvents(events: ReadonlyArray<InventoryEvent>): void {
    for (const { record } of events) {
      this.events.set(record.event, (this.events.get(record.event) ?? 0) + 1)
      if (record.event === "removed") {
        this.known.delete(record.uuid)
        this.health.delete(record.uuid)
        continue
      }
      this.known.set(record.uuid, record.node)
      if (record.health === undefined) this.health.delete(record.uuid)
      else this.health.set(record.uuid, record.health.state)
    }
  }

  /** GPUs known now and ever read; nodes with known GPUs now and ever read. */
  private counts(): string {
    const nodesNow = new Set(this.known.values()).size
    return `GPUs ${this.known.size} known now (${this.gpus.size} ever read), nodes ${nodesNow} with GPUs now (${this.nodesRead.size} ever read)`
  }

  /** One line for stderr while the demo runs. */
  progress(elapsedSeconds: number): string {
    const failedNodes = new Set([...this.failedNodes.values()].flatMap((nodes) => [...nodes])).size
    return (
      `demo after ${elapsedSeconds.toFixed(0)} s: ${this.counts()}, ` +
      `events ${this.eventCounts()}, errors ${this.failedReadings} ` +
      `(${failedNodes} node${failedNodes === 1 ? "" : "s"})\n`
    )
  }

  summary(elapsedSeconds: number, removalGraceMs: number): string {
    const failures = [...this.failedNodes.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([kind, nodes]) =>
          `    ${kind}: ${nodes.size} node${nodes.size === 1 ? "" : "s"} (${[...nodes].sort().join(", ")})`,
      )
    return [
      `demo summary after ${elapsedSeconds.toFixed(1)} s:`,
      `  ${this.counts()}, ${this.readings} readings`,
      `  events: ${this.eventCounts()}`,
      `  health of the GPUs known now: ${this.healthCounts()}`,
      ...(this.dra
        ? [
            `  nodes known from their ResourceSlices alone, without serials: ${this.sliceOnlyNodes.size}`,
            `  nodes gone: ${this.goneNodes.size} (the node, or its plugin pod and its ResourceSlices, was deleted; their`,
            `    GPUs are removed once gone for the removal grace, ${formatGoDuration(removalGraceMs)}, unless they come back)`,
          ]
        : [
            `  nodes gone: ${this.goneNodes.size} (their device-plugin pod or the node itself was deleted; their GPUs are`,
            `    removed once gone for the removal grace, ${formatGoDuration(removalGraceMs)}, unless the pod comes back)`,
          ]),
      failures.length === 0 ? "  errors: none" : "  errors by kind:",
      ...failures,
      "",
    ].join("\n")
  }

  private healthCounts(): string {
    const counts = new Map<HealthState, number>()
    for (const state of this.health.values()) counts.set(state, (counts.get(state) ?? 0) + 1)
    const reported = healthStates.map((state) => `${state} ${counts.get(state) ?? 0}`).join(", ")
    const silent = this.known.size - this.health.size
    return silent === 0 ? reported : `${reported}, not reported ${silent}`
  }

  private eventCounts(): string {
    return shownKinds.map((kind) => `${kind} ${this.events.get(kind) ?? 0}`).join(", ")
  }
}
