import type { GpuRecord } from "./GpuRecord.ts"

/** Where a GPU is, as its last record on a hub said. */
export interface GpuPlace {
  readonly cluster: string
  readonly node: string
  readonly machine: string
}

/**
 * One change of what a hub keeps across restarts: a GPU's place set or forgotten, a removal held for a
 * move across clusters or released. Writing the same change again is harmless.
 */
export type HubFleetChange =
  | { readonly _tag: "Place"; readonly uuid: string; readonly place: GpuPlace }
  | { readonly _tag: "Forget"; readonly uuid: string }
  | { readonly _tag: "Hold"; readonly uuid: string; readonly removal: GpuRecord }
  | { readonly _tag: "Release"; readonly uuid: string }

/** What a hub's store held at start: every GPU's place and the removals held, by UUID. */
export interface HubFleetSnapshot {
  readonly places: ReadonlyMap<string, GpuPlace>
  readonly held: ReadonlyMap<string, GpuRecord>
}
