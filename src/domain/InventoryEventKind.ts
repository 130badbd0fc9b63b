export const inventoryEventKinds = ["observed", "added", "removed", "moved", "health"] as const

/** What the inventory says about one GPU: seen again, new on a node, gone, moved, or its health changed. */
export type InventoryEventKind = (typeof inventoryEventKinds)[number]
