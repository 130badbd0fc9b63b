import type { KnownGpu } from "../../../domain/KnownGpu.ts"
import { chassisOf } from "../../../domain/KnownGpu.ts"
import { isLabelValue } from "../../../kubeclient/labels/LabelValue.ts"

/**
 * The node labels that describe a node's GPUs, under a prefix (`gpu-serials.dev`):
 * `<prefix>/gpu-<index>` the serial, `<prefix>/gpu-<index>-uuid` the UUID, `<prefix>/chassis` the chassis
 * serial and `<prefix>/gpu-count`. Values that cannot be label values are left out and reported.
 */

/** What labels say of one GPU. */
export interface LabelledGpu {
  readonly uuid: string
  readonly node: string
  readonly index: number
  /** Absent when nvidia-smi reported none. */
  readonly serial?: string
  /** Empty when the GPU has no chassis. */
  readonly chassis: string
  /** When a reading last saw the GPU: of two GPUs with one index on a node, the later one is labelled. */
  readonly lastSeen: number
}

/** The part of a GPU labels keep. */
export const labelledGpuOf = (known: KnownGpu): LabelledGpu => ({
  uuid: known.uuid,
  node: known.node,
  index: known.gpu.index,
  ...(known.gpu.serial === undefined ? {} : { serial: known.gpu.serial }),
  chassis: chassisOf(known),
  lastSeen: known.lastSeen.getTime(),
})

/** Which label a value was meant for; a bounded metric label. */
export type LabelledFact = "serial" | "uuid" | "chassis"

/** A value left out because it cannot be a label value. */
export interface SkippedLabelValue {
  readonly label: LabelledFact
  readonly key: string
  readonly value: string
}

/** The labels a node should carry under the prefix, and the values that had to be left out. */
export interface DesiredNodeLabels {
  readonly labels: Readonly<Record<string, string>>
  readonly skipped: ReadonlyArray<SkippedLabelValue>
}

export const serialKey = (prefix: string, index: number): string => `${prefix}/gpu-${index}`
export const uuidKey = (prefix: string, index: number): string => `${prefix}/gpu-${index}-uuid`
export const chassisKey = (prefix: string): string => `${prefix}/chassis`
export const gpuCountKey = (prefix: string): string => `${prefix}/gpu-count`

/** Whether a label key is one of ours: `<prefix>/<name>`. */
export const isUnderPrefix = (prefix: string, key: string): boolean => key.startsWith(`${prefix}/`)

/** The labels of `labels` under the prefix, nothing else. */
export const labelsUnderPrefix = (
  prefix: string,
  labels: Readonly<Record<string, string>> | null | undefined,
): Readonly<Record<string, string>> => {
  const under: Record<string, string> = {}
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (isUnderPrefix(prefix, key)) under[key] = value
  }
  return under
}

/** One GPU per index: the one a reading saw last (a GPU moved in before the one it replaced is removed). */
const byIndex = (gpus: Iterable<LabelledGpu>): ReadonlyArray<LabelledGpu> => {
  const chosen = new Map<number, LabelledGpu>()
  for (const gpu of gpus) {
    const held = chosen.get(gpu.index)
    if (
      held === undefined ||
      gpu.lastSeen > held.lastSeen ||
      (gpu.lastSeen === held.lastSeen && gpu.uuid < held.uuid)
    ) {
      chosen.set(gpu.index, gpu)
    }
  }
  return [...chosen.values()].sort((a, b) => a.index - b.index)
}

/** The labels that describe `gpus` (the GPUs the inventory holds on one node). */
export const desiredNodeLabels = (prefix: string, gpus: Iterable<LabelledGpu>): DesiredNodeLabels => {
  const labels: Record<string, string> = {}
  const skipped: Array<SkippedLabelValue> = []
  const put = (label: LabelledFact, key: string, value: string) => {
    if (isLabelValue(value)) labels[key] = value
    else skipped.push({ label, key, value })
  }
  const labelled = byIndex(gpus)
  let chassis = ""
  for (const gpu of labelled) {
    put("uuid", uuidKey(prefix, gpu.index), gpu.uuid)
    if (gpu.serial !== undefined && gpu.serial !== "") put("serial", serialKey(prefix, gpu.index), gpu.serial)
    if (chassis === "") chassis = gpu.chassis
  }
  if (chassis !== "") put("chassis", chassisKey(prefix), chassis)
  if (labelled.length > 0) labels[gpuCountKey(prefix)] = String(labelled.length)
  return { labels, skipped }
}

/** A GPU as a node's labels describe it. */
export interface GpuOfLabels {
  readonly index: number
  readonly uuid: string
  readonly serial?: string
  /** Empty when the node has no chassis label. */
  readonly chassis: string
}

/** The GPUs a node's labels describe: one per `<prefix>/gpu-<index>-uuid` label. */
export const gpusOfLabels = (
  prefix: string,
  labels: Readonly<Record<string, string>> | null | undefined,
): ReadonlyArray<GpuOfLabels> => {
  const under = labelsUnderPrefix(prefix, labels)
  const uuidName = /^gpu-(0|[1-9][0-9]*)-uuid$/
  const chassis = under[chassisKey(prefix)] ?? ""
  const gpus: Array<GpuOfLabels> = []
  for (const [key, uuid] of Object.entries(under)) {
    const match = uuidName.exec(key.slice(prefix.length + 1))
    if (match === null || uuid === "") continue
    const index = Number(match[1])
    const serial = under[serialKey(prefix, index)]
    gpus.push({ index, uuid, ...(serial === undefined || serial === "" ? {} : { serial }), chassis })
  }
  return gpus.sort((a, b) => a.index - b.index)
}
