/**
 * A watch stream the server can cut: dropped (connection reset) or stalled (kept open and silent until
 * its timeout ends it, as when events stop flowing somewhere between the store and the client).
 */
export interface WatchConnection {
  readonly resource: string
  drop(): void
  stall(): void
}

/** The registry of open watch streams, for fault injection and for closing them all on shutdown. */
export class OpenWatches {
  private readonly connections = new Set<WatchConnection>()

  add(connection: WatchConnection): () => void {
    this.connections.add(connection)
    return () => this.connections.delete(connection)
  }

  get size(): number {
    return this.connections.size
  }

  count(resource?: string): number {
    return [...this.connections].filter((connection) => resource === undefined || connection.resource === resource)
      .length
  }

  /** Resets the connections of open watches (all, or those of one resource); returns how many. */
  drop(resource?: string): number {
    const matching = [...this.connections].filter(
      (connection) => resource === undefined || connection.resource === resource,
    )
    for (const connection of matching) connection.drop()
    return matching.length
  }

  /** Keeps open watches connected but sends nothing more on them; returns how many. */
  stall(resource?: string): number {
    const matching = [...this.connections].filter(
      (connection) => resource === undefined || connection.resource === resource,
    )
    for (const connection of matching) connection.stall()
    return matching.length
  }

  /** Drops each open watch with the given probability; called once per second by the fault plan. */
  dropRandomly(probability: number, random: () => number): void {
    if (probability <= 0) return
    for (const connection of [...this.connections]) if (random() < probability) connection.drop()
  }
}
