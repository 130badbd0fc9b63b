import type { NodeObservation } from "../domain/NodeObservation.ts"

/** What the demo saw, for its closing summary. */
export class DemoTally {
  private readonly nodesRead = new Set<string>()
  private readonly gpus = new Set<string>()
  private readonly failedNodes = new Map<string, Set<string>>()
  private readonly goneNodes = new Set<string>()
  private readings = 0

  observe(observation: NodeObservation): void {
    switch (observation._tag) {
      case "NodeRead":
        this.readings++
        this.nodesRead.add(observation.node.name)
        for (const gpu of observation.reading.gpus) this.gpus.add(gpu.uuid)
        return
      case "NodeReadFailed": {
        const nodes = this.failedNodes.get(observation.failure.kind) ?? new Set<string>()
        nodes.add(observation.node.name)
        this.failedNodes.set(observation.failure.kind, nodes)
        return
      }
      case "NodeGone":
        this.goneNodes.add(observation.node.name)
    }
  }

  summary(elapsedSeconds: number): string {
    const failures = [...this.failedNodes.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([kind, nodes]) =>
          `  ${kind}: ${nodes.size} node${nodes.size === 1 ? "" : "s"} (${[...nodes].sort().join(", ")})`,
      )
    return [
      `demo summary after ${elapsedSeconds.toFixed(1)} s:`,
      `  nodes read: ${this.nodesRead.size} (${this.readings} readings), GPUs: ${this.gpus.size}`,
      `  nodes gone: ${this.goneNodes.size}`,
      failures.length === 0 ? "  errors: none" : "  errors by kind:",
      ...failures,
      "",
    ].join("\n")
  }
}
