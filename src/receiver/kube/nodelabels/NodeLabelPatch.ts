import type { LabelPatch } from "../../../kubeclient/labels/LabelPatch.ts"
import { isUnderPrefix } from "./GpuNodeLabels.ts"

/**
 * The merge patch that turns a node's labels under the prefix into `desired`: labels to set or change,
 * and `null` for every label under the prefix that `desired` has not (GPUs gone, indexes shrunk).
 * Labels outside the prefix are never touched. `undefined` when the node already carries `desired`.
 */
export const nodeLabelPatch = (
  prefix: string,
  current: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): LabelPatch | undefined => {
  const patch: Record<string, string | null> = {}
  for (const [key, value] of Object.entries(desired)) {
    if (current[key] !== value) patch[key] = value
  }
  for (const key of Object.keys(current)) {
    if (isUnderPrefix(prefix, key) && !Object.hasOwn(desired, key)) patch[key] = null
  }
  return Object.keys(patch).length === 0 ? undefined : patch
}
