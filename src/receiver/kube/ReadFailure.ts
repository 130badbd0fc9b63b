import * as Schema from "effect/Schema"
import type { ReadingFailure } from "../../domain/NodeObservation.ts"
import type { KubeApiError } from "../../kubeclient/rest/KubeApiError.ts"
import type { NvsmiError, NvsmiErrorKind } from "../../nvsmi/NvsmiError.ts"

/** Why reading a pod failed outside nvidia-smi itself: the exec, the node lookup, or the hand-off. */
export type ExecFailureKind =
  | "exec-timeout"
  | "exec-throttled"
  | "exec-server-error"
  | "exec-connection"
  | "exec-container-not-found"
  | "exec-forbidden"
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
export const transientKinds: ReadonlySet<ReadFailureKind> = new Set<ReadFailureKind>([
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

/**
 * One failed attempt to read a node, with its kind, a short message, whether a retry may help and, when
 * nvidia-smi printed something telling, an excerpt of it (at most 120 characters, one line).
 */
export class ReadFailure extends Schema.TaggedError<ReadFailure>()("ReadFailure", {
  kind: Schema.String,
  detail: Schema.String,
  transient: Schema.Boolean,
  excerpt: Schema.optionalKey(Schema.String),
}) {
  override get message(): string {
    return this.detail
  }
}

export const readFailure = (kind: ReadFailureKind, detail: string, excerpt?: string): ReadFailure =>
  new ReadFailure({
    kind,
    detail,
    transient: transientKinds.has(kind),
    ...(excerpt === undefined || excerpt === "" ? {} : { excerpt }),
  })

export const failureOfNvsmi = (error: NvsmiError): ReadFailure =>
  readFailure(error.kind, error.message, "excerpt" in error ? error.excerpt : undefined)

const execKindOf: Readonly<Record<KubeApiError["kind"], ExecFailureKind>> = {
  throttled: "exec-throttled",
  "server-error": "exec-server-error",
  gone: "exec-rejected",
  rejected: "exec-rejected",
  timeout: "exec-timeout",
  connection: "exec-connection",
}

/**
 * How the API server refuses an exec into a container the pod does not have: `container X is not valid
 * for pod Y` (400), or, with an empty container name and several containers, `a container name must be
 * specified`.
 */
const missingContainer = /\bcontainer \S+ is not valid for pod\b|\bcontainer name must be specified\b/

/**
 * The read failure of a failed exec. Among rejections, a 403 is RBAC (`exec-forbidden`) and a 400 or 404
 * naming an unknown container is `exec-container-not-found`: both are the configuration, not the node.
 */
export const failureOfExec = (error: KubeApiError): ReadFailure => {
  if (error.kind === "rejected" && error.status === 403) {
    return readFailure("exec-forbidden", error.message)
  }
  if (
    error.kind === "rejected" &&
    (error.status === 400 || error.status === 404) &&
    missingContainer.test(error.detail)
  ) {
    return readFailure("exec-container-not-found", error.message)
  }
  return readFailure(execKindOf[error.kind], error.message)
}

/** The failure as an observation carries it. */
export const readingFailureOf = (failure: ReadFailure): ReadingFailure => ({
  kind: failure.kind,
  message: failure.detail,
})
