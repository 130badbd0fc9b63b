import type { ReadingsSummary } from "./FailingNodes.ts"

/** What the receiver was configured to read, and what its pod informer found. */
export interface PodSelection {
  readonly namespace: string
  readonly labelSelector: string
  readonly container: string
  /** Whether the pods have been listed once. */
  readonly listed: boolean
  readonly pods: number
  /** Pods ready to be read: the verdict on failures waits until this many nodes have had a reading. */
  readonly readyPods: number
}

/**
 * Whether readings work, for the `readings` readiness check: `NoPods` when the listed selection is empty;
 * once every ready pod's node has had a reading, `Failing` when none ever succeeded, or when every node
 * fails with the same configuration kind (`setting` then names what to check). `kind` is the most common
 * failure kind.
 */
export type ReadingsVerdict =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "NoPods"; readonly reason: string }
  | {
      readonly _tag: "Failing"
      readonly kind: string
      readonly reason: string
      readonly setting: string | undefined
    }

interface Advice {
  readonly setting: string
  readonly hint: string
}

/** Failure kinds that say the configuration is wrong rather than a node, with what to check for each. */
const adviceFor = (kind: string, selection: PodSelection): Advice | undefined => {
  switch (kind) {
    case "exec-container-not-found":
      return { setting: "CONTAINER", hint: `the pods have no container "${selection.container}"` }
    case "exec-not-started":
      return { setting: "CONTAINER", hint: `nvidia-smi cannot be started in container "${selection.container}"` }
    case "exec-forbidden":
      return {
        setting: "RBAC",
        hint: `the service account may not create pods/exec in namespace "${selection.namespace}", or an admission policy refuses the command`,
      }
    case "exec-rejected":
      return { setting: "CONTAINER, NAMESPACE, LABEL_SELECTOR", hint: "the API server rejects the exec" }
    default:
      return undefined
  }
}

const checking = (advice: Advice | undefined): string =>
  advice === undefined ? "" : `; check ${advice.setting}: ${advice.hint}`

export const readingsVerdict = (summary: ReadingsSummary, selection: PodSelection): ReadingsVerdict => {
  if (selection.listed && selection.pods === 0) {
    return {
      _tag: "NoPods",
      reason: `no pod in namespace "${selection.namespace}" matches label selector "${selection.labelSelector}"; check NAMESPACE and LABEL_SELECTOR`,
    }
  }
  const byCount = [...summary.failingByKind].sort(([a, countA], [b, countB]) => countB - countA || a.localeCompare(b))
  const [mostCommon] = byCount
  if (mostCommon === undefined || summary.judged < selection.readyPods) {
    return { _tag: "Ready" }
  }
  const [kind] = mostCommon
  const advice = adviceFor(kind, selection)
  if (summary.succeeding === 0 && byCount.length === 1 && advice !== undefined) {
    return {
      _tag: "Failing",
      kind,
      reason: `every node read fails with ${kind}${checking(advice)}`,
      setting: advice.setting,
    }
  }
  if (!summary.everSucceeded && summary.everFailed) {
    const failing = byCount.map(([name, count]) => `${name} ${count}`).join(", ")
    return {
      _tag: "Failing",
      kind,
      reason: `no reading has succeeded yet (failing nodes by kind: ${failing})${checking(advice)}`,
      setting: advice?.setting,
    }
  }
  return { _tag: "Ready" }
}
