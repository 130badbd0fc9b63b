import { JetStreamApiError } from "@nats-io/jetstream"
import {
  AuthorizationError,
  InvalidArgumentError,
  InvalidSubjectError,
  PermissionViolationError,
  RequestError,
} from "@nats-io/transport-node"
import { redactUrlsIn } from "../../log/UrlRedaction.ts"

/**
 * Whether NATS refused a call for a reason that asking again cannot change: a subject or argument it
 * rejects, a permission the user lacks (nats.js wraps a refused request's permission violation in a
 * `RequestError`), or a JetStream API error such as overlapping subjects, a stream config it refuses or
 * storage it cannot grant. JetStream's 503 (temporarily unavailable), timeouts, lost connections and
 * no responders may pass and are not.
 */
export const isPermanent = (cause: unknown): boolean =>
  cause instanceof InvalidSubjectError ||
  cause instanceof InvalidArgumentError ||
  cause instanceof PermissionViolationError ||
  cause instanceof AuthorizationError ||
  (cause instanceof RequestError && cause.cause instanceof PermissionViolationError) ||
  (cause instanceof JetStreamApiError && cause.status !== 503)

/**
 * Whether a JetStream publish found nobody to answer: no stream captures the subject (the stream was
 * deleted or lost its subjects), or the server's JetStream is not up yet. nats.js reports it as
 * "jetstream is not enabled", the request's no-responders error as its cause.
 */
export const isNoResponders = (cause: unknown): boolean =>
  cause instanceof RequestError
    ? cause.isNoResponders()
    : cause instanceof Error && cause.cause !== undefined && isNoResponders(cause.cause)

/** The message of a failure, without nats.js's class name. */
export const natsReason = (cause: unknown): string =>
  redactUrlsIn(cause instanceof Error ? cause.message : String(cause))
