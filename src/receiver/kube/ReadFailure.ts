import { Schema } from "effect"
import type { ReadingFailure } from "../../domain/NodeObservation.ts"
import type { NvsmiError, NvsmiErrorKind } from "../../nvsmi/NvsmiError.ts"
import type { KubeApiError } from "./KubeApiError.ts"

/** Why reading a pod failed outside nvidia-smi itself: the exec, the node lookup, or the hand-off. */
export type ExecFailureKind =
  | "exec-timeout"
  | "exec-throttled"
  | "exec-server-error"
  | "exec-connection"
  | "exec-rejected"
  | "exec-lost"
  | "exec-not-started"
  | "node-unknown"
  | "handoff-timeout"

/** Every kind a failed reading can have: a bounded metric label. */
export type ReadFailureKind = NvsmiErrorKind | ExecFailureKind

/**
 * Failures worth trying again soon. From nvidia-smi only output cut short or missing, which is usually the
 * connection rather than the node: the others (driver not loaded, NVML mismatch, no devices, GPUs that
 * need a reset, …) say the same until someone changes the node, so the pod is read again at its next
 * update or resync. From the exec everything but a rejection (no such pod or container, forbidden) and a
 * command that cannot start.
 */
const transientKinds: ReadonlySet<ReadFailureKind> = new Set<ReadFailureKind>([
  "truncated",
  "empty",
  "exec-timeout",
  "exec-throttled",
  "exec-server-error",
  "exec-connection",
  "exec-lost",
  "node-unknown",
  "handoff-timeout",
])

/** One failed attempt to read a node, with its kind, a short message and whether a retry may help. */
export class ReadFailure extends Schema.TaggedError<ReadFailure>()("ReadFailure", {
  kind: Schema.String,
  detail: Schema.String,
  transient: Schema.Boolean,
}) {
  override get message(): string {
    return this.detail
  }
}

export const readFailure = (kind: ReadFailureKind, detail: string): ReadFailure =>
  new ReadFailure({
    kind,
    detail,
    transient: transientKinds.has(kind),
  })

export const failureOfNvsmi = (error: NvsmiError): ReadFailure => readFailure(error.kind, error.message)

const execKindOf: Readonly<Record<KubeApiError["kind"], ExecFailureKind>> = {
  throttled: "exec-throttled",
  "server-error": "exec-server-error",
  gone: "exec-rejected",
  rejected: "exec-rejected",
  timeout: "exec-timeout",
  connection: "exec-connection",
}

export const failureOfExec = (error: KubeApiError): ReadFailure => readFailure(execKindOf[error.kind], error.message)

/** The failure as an observation carries it. */
export const readingFailureOf = (failure: ReadFailure): ReadingFailure => ({
  kind: failure.kind,
  message: failure.detail,
})
