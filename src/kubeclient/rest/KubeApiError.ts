import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { shortMessage } from "../../log/ShortMessage.ts"
/**
 * What went wrong with a Kubernetes API call, as a bounded label: `throttled` (429), `server-error` (5xx),
 * `gone` (410, a resourceVersion or continue token too old), `rejected` (any other 4xx), `timeout` (no
 * answer within the call's deadline) or `connection` (no HTTP answer at all).
 */
export type KubeApiFailureKind = "throttled" | "server-error" | "gone" | "rejected" | "timeout" | "connection"

/** A Kubernetes API call failed; `message` is short and never carries a response body beyond its status message. */
export class KubeApiError extends Schema.TaggedError<KubeApiError>()("KubeApiError", {
  /** What was attempted, e.g. `list pods`, `watch nodes`, `exec`. */
  operation: Schema.String,
  kind: Schema.Literals(["throttled", "server-error", "gone", "rejected", "timeout", "connection"]),
  status: Schema.optionalKey(Schema.Number),
  detail: Schema.String,
}) {
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `${this.operation} failed${status}: ${this.detail}`
  }

  /** Whether trying again later may succeed: everything but a rejection (RBAC, bad request, not found). */
  get transient(): boolean {
    return this.kind !== "rejected"
  }
}

export const kindOfStatus = (status: number): KubeApiFailureKind =>
  status === 429 ? "throttled" : status === 410 ? "gone" : status >= 500 ? "server-error" : "rejected"

/** The `message` of a Kubernetes Status body, whether it arrives parsed or as JSON text. */
export const statusMessageOf = (body: unknown): string | undefined => {
  let parsed: unknown = body
  if (Predicate.isString(body)) {
    try {
      parsed = JSON.parse(body)
    } catch {
      return undefined
    }
  }
  return Predicate.hasProperty(parsed, "message") && Predicate.isString(parsed.message) ? parsed.message : undefined
}

const handshakeStatus = /Unexpected server response: (\d{3})/

const isTimeout = (cause: unknown): boolean =>
  Predicate.hasProperty(cause, "name") && (cause.name === "TimeoutError" || cause.name === "AbortError")

/** Deepest readable message of an error and its causes (undici wraps socket errors in `fetch failed`). */
const messageOf = (cause: unknown): string => {
  let current: unknown = cause
  let message = "unknown error"
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (Predicate.hasProperty(current, "message") && Predicate.isString(current.message) && current.message !== "") {
      message = current.message
    } else if (Predicate.hasProperty(current, "code") && Predicate.isString(current.code)) {
      message = current.code
    }
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return message
}

/** Classifies whatever a request, a watch or a WebSocket handshake failed with. */
export const kubeApiErrorOf = (operation: string, cause: unknown): KubeApiError => {
  if (cause instanceof KubeApiError) {
    return cause
  }
  // A WebSocket error event carries the error it reports.
  if (Predicate.hasProperty(cause, "error") && cause.error instanceof KubeApiError) {
    return cause.error
  }
  if (isTimeout(cause)) {
    return new KubeApiError({ operation, kind: "timeout", detail: "no answer before the deadline" })
  }
  if (Predicate.hasProperty(cause, "statusCode") && Predicate.isNumber(cause.statusCode)) {
    const status = cause.statusCode
    return new KubeApiError({ operation, kind: kindOfStatus(status), status, detail: shortMessage(messageOf(cause)) })
  }
  const message = messageOf(cause)
  const handshake = handshakeStatus.exec(message)
  if (handshake !== null) {
    const status = Number(handshake[1])
    return new KubeApiError({ operation, kind: kindOfStatus(status), status, detail: shortMessage(message) })
  }
  return new KubeApiError({ operation, kind: "connection", detail: shortMessage(message) })
}
