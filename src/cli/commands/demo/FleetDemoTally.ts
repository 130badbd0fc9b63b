import type { InventoryEvent } from "../../../domain/InventoryEvent.ts"
import type { InventoryEventKind } from "../../../domain/InventoryEventKind.ts"

const shownKinds: ReadonlyArray<InventoryEventKind> = ["added", "moved", "removed", "observed", "health"]

/** A GPU the hub reported moved from one cluster to another. */
interface CrossClusterMove {
  readonly uuid: string
  readonly serial: string
  readonly from: string
  readonly to: string
}

/** The most cross-cluster moves the summary lists one by one; it counts them all. */
const listedMoves = 20

/** What the hub of the fleet demo reported, for its progress lines and its closing summary. */
export class FleetDemoTally {
  /** GPUs the hub holds now, by UUID, with their cluster: from its events, as a consumer of them knows. */
  private readonly known = new Map<string, string>()
  private readonly events = new Map<InventoryEventKind, number>()
  private readonly moves: Array<CrossClusterMove> = []

  observeEvents(events: ReadonlyArray<InventoryEvent>): void {
    for (const { record } of events) {
      this.events.set(record.event, (this.events.get(record.event) ?? 0) + 1)
      if (record.event === "removed") {
        this.known.delete(record.uuid)
        continue
      }
      this.known.set(record.uuid, record.cluster)
      if (
        record.event === "moved" &&
        record.previousCluster !== undefined &&
        record.previousCluster !== record.cluster
      ) {
        this.moves.push({
          uuid: record.uuid,
          serial: record.gpu,
          from: `${record.previousCluster}/${record.previousNode ?? ""}`,
          to: `${record.cluster}/${record.node}`,
        })
      }
    }
  }

  /** The GPUs the hub knows now, in all and per cluster in name order. */
  private counts(): string {
    const perCluster = new Map<string, number>()
    for (const cluster of this.known.values()) perCluster.set(cluster, (perCluster.get(cluster) ?? 0) + 1)
    const clusters = [...perCluster.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([cluster, gpus]) => `${cluster} ${gpus}`)
    return `GPUs ${this.known.size} known now${clusters.length === 0 ? "" : ` (${clusters.join(", ")})`}`
  }

  private eventCounts(): string {
    return shownKinds.map((kind) => `${kind} ${this.events.get(kind) ?? 0}`).join(", ")
  }

  /** One line for stderr while the demo runs. */
  progress(elapsedSeconds: number): string {
    return (
      `hub after ${elapsedSeconds.toFixed(0)} s: ${this.counts()}, events ${this.eventCounts()}, ` +
      `cross-cluster moves ${this.moves.length}\n`
    )
  }

  /** The hub's part of the summary; `swapped` is how many boards the simulators moved between clusters. */
  summary(elapsedSeconds: number, swapped: number): string {
    const unlisted = this.moves.length - listedMoves
    return [
      `hub summary after ${elapsedSeconds.toFixed(1)} s:`,
      `  ${this.counts()}`,
      `  events: ${this.eventCounts()}`,
      `  cross-cluster moves: ${this.moves.length} (boards the simulated clusters swapped between them: ${swapped})`,
      ...this.moves
        .slice(0, listedMoves)
        .map((move) => `    ${move.uuid} (serial ${move.serial || "none"}) ${move.from} -> ${move.to}`),
      ...(unlisted > 0 ? [`    and ${unlisted} more`] : []),
      "",
    ].join("\n")
  }
}
