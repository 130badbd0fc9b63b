import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type { ClusterAccess } from "../clientcmd/ClusterAccess.ts"
import { KubeApiError, kubeApiErrorOf } from "../rest/KubeApiError.ts"
import { type KubeRequest, makeKubeTransport, readBody } from "../rest/KubeTransport.ts"
import type { LeaderElectionRecord } from "./LeaderElectionRecord.ts"

/** A Lease object as the API server answers it; fields the election does not use are kept as they are. */
type LeaseObject = Readonly<Record<string, unknown>> & { readonly spec?: Readonly<Record<string, unknown>> }

/** The Lease as read: its record, and the object whose resourceVersion an update must name. */
export interface StoredLease {
  readonly record: LeaderElectionRecord
  readonly lease: LeaseObject
}

/**
 * client-go's `resourcelock.LeaseLock`: the coordination.k8s.io/v1 Lease that holds the leader election
 * record, read and written through a client of its own (never the receiver's QPS bucket, so a renewal
 * never queues behind reads). Updates carry the resourceVersion read, so a lost race is a 409 Conflict.
 * Every call takes its deadline from the caller: a renewal's never reaches past the renew deadline.
 */
export interface LeaseLock {
  /** `namespace/name`, for logs. */
  readonly describe: string
  /** The lease, or nothing when there is none. */
  readonly get: (timeout: Duration.Duration) => Effect.Effect<StoredLease | undefined, KubeApiError>
  readonly create: (
    record: LeaderElectionRecord,
    timeout: Duration.Duration,
  ) => Effect.Effect<StoredLease, KubeApiError>
  readonly update: (
    read: StoredLease,
    record: LeaderElectionRecord,
    timeout: Duration.Duration,
  ) => Effect.Effect<StoredLease, KubeApiError>
}

/** A lost compare-and-set: another replica wrote the lease since it was read. */
export const isConflict = (error: KubeApiError): boolean => error.status === 409

export const make = (access: ClusterAccess, namespace: string, name: string): LeaseLock => {
  const transport = makeKubeTransport(access)
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`
  const path = `${collection}/${encodeURIComponent(name)}`

  const call = (
    operation: string,
    request: KubeRequest,
    timeout: Duration.Duration,
  ): Effect.Effect<StoredLease, KubeApiError> =>
    Effect.tryPromise({
      // Interruption (the deadline below) aborts the HTTP request itself.
      try: async (signal) => {
        const response = await transport.open(request, signal)
        const lease = leaseOf(JSON.parse((await readBody(operation, response, signal)).toString("utf8")))
        return { record: recordOf(lease), lease }
      },
      catch: (cause) => kubeApiErrorOf(operation, cause),
    }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(new KubeApiError({ operation, kind: "timeout", detail: "no answer before the deadline" })),
      }),
    )

  const get = (timeout: Duration.Duration) =>
    call("get lease", { method: "GET", path }, timeout).pipe(
      Effect.map((stored): StoredLease | undefined => stored),
      Effect.catchIf(
        (error) => error.status === 404,
        () => Effect.succeed(undefined),
      ),
    )

  const create = (record: LeaderElectionRecord, timeout: Duration.Duration) =>
    call(
      "create lease",
      {
        method: "POST",
        path: collection,
        body: JSON.stringify({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: specOf(record),
        }),
      },
      timeout,
    )

  const update = (read: StoredLease, record: LeaderElectionRecord, timeout: Duration.Duration) =>
    call(
      "update lease",
      { method: "PUT", path, body: JSON.stringify({ ...read.lease, spec: specOf(record) }) },
      timeout,
    )

  return { describe: `${namespace}/${name}`, get, create, update }
}

/** The answer as a Lease object; anything else is a malformed answer. */
const leaseOf = (parsed: unknown): LeaseObject => {
  if (!Predicate.isObject(parsed) || Array.isArray(parsed)) {
    throw new Error("the answer is not a Lease object")
  }
  return parsed as LeaseObject
}

/** MicroTime: RFC 3339 in UTC with six fractional digits, as client-go writes it. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

const specOf = (record: LeaderElectionRecord) => ({
  holderIdentity: record.holderIdentity,
  leaseDurationSeconds: record.leaseDurationSeconds,
  acquireTime: microTime(record.acquireTimeMs),
  renewTime: microTime(record.renewTimeMs),
  leaseTransitions: record.leaseTransitions,
})

const millisOf = (time: unknown): number => {
  const parsed = Predicate.isString(time) ? Date.parse(time) : Number.NaN
  return Number.isNaN(parsed) ? 0 : parsed
}

const stringOf = (value: unknown): string => (Predicate.isString(value) ? value : "")
const numberOf = (value: unknown): number => (Predicate.isNumber(value) ? value : 0)

const recordOf = (lease: LeaseObject): LeaderElectionRecord => ({
  holderIdentity: stringOf(lease.spec?.holderIdentity),
  leaseDurationSeconds: numberOf(lease.spec?.leaseDurationSeconds),
  acquireTimeMs: millisOf(lease.spec?.acquireTime),
  renewTimeMs: millisOf(lease.spec?.renewTime),
  leaseTransitions: numberOf(lease.spec?.leaseTransitions),
})
