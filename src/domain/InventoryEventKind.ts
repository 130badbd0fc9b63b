export const inventoryEventKinds = ["observed", "added", "removed", "moved"] as const

/** What the inventory says about one GPU: seen again, new on a node, gone, or moved. */
export type InventoryEventKind = (typeof inventoryEventKinds)[number]
