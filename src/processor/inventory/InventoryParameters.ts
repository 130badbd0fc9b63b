/** What the inventory's transitions need to know besides the observation and the time. */
export interface InventoryParameters {
  /** Written into every record (`cluster`). */
  readonly cluster: string
  /** An unchanged GPU is re-affirmed as `observed` once this long has passed since its last event; 0: never. */
  readonly reportIntervalMs: number
  /** How long a node whose device-plugin pod or node object is gone keeps its GPUs before they are `removed`. */
  readonly removalGraceMs: number
}
