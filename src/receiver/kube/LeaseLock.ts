import {
  type ConfigurationOptions,
  CoordinationV1Api,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  type V1Lease,
  V1MicroTime,
} from "@kubernetes/client-node"
import { type Duration, Effect } from "effect"
import { KubeApiError, kubeApiErrorOf } from "./KubeApiError.ts"
import type { LeaderElectionRecord } from "./LeaderElectionRecord.ts"

/** The Lease as read: its record, and the object whose resourceVersion an update must name. */
export interface StoredLease {
  readonly record: LeaderElectionRecord
  readonly lease: V1Lease
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

export const make = (config: KubeConfig, namespace: string, name: string): LeaseLock => {
  const leases = config.makeApiClient(CoordinationV1Api)

  const call = <A>(
    operation: string,
    timeout: Duration.Duration,
    request: (options: ConfigurationOptions) => Promise<A>,
  ): Effect.Effect<A, KubeApiError> =>
    Effect.tryPromise({
      // Interruption (the deadline below) aborts the HTTP request itself.
      try: (signal) => request({ middleware: [withSignal(signal)], middlewareMergeStrategy: "append" }),
      catch: (cause) => kubeApiErrorOf(operation, cause),
    }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(new KubeApiError({ operation, kind: "timeout", detail: "no answer before the deadline" })),
      }),
    )

  const get = (timeout: Duration.Duration) =>
    call("get lease", timeout, (options) => leases.readNamespacedLease({ namespace, name }, options)).pipe(
      Effect.map((lease): StoredLease | undefined => ({ record: recordOf(lease), lease })),
      Effect.catchIf(
        (error) => error.status === 404,
        () => Effect.succeed(undefined),
      ),
    )

  const create = (record: LeaderElectionRecord, timeout: Duration.Duration) =>
    call("create lease", timeout, (options) =>
      leases.createNamespacedLease(
        {
          namespace,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec: specOf(record),
          },
        },
        options,
      ),
    ).pipe(Effect.map((lease) => ({ record: recordOf(lease), lease })))

  const update = (read: StoredLease, record: LeaderElectionRecord, timeout: Duration.Duration) =>
    call("update lease", timeout, (options) =>
      leases.replaceNamespacedLease({ namespace, name, body: { ...read.lease, spec: specOf(record) } }, options),
    ).pipe(Effect.map((lease) => ({ record: recordOf(lease), lease })))

  return { describe: `${namespace}/${name}`, get, create, update }
}

const withSignal = (signal: AbortSignal): ObservableMiddleware => ({
  pre: (context) => {
    context.setSignal(signal)
    return new Observable(Promise.resolve(context))
  },
  post: (context) => new Observable(Promise.resolve(context)),
})

/** MicroTime: RFC 3339 with six fractional digits (`V1MicroTime` writes them). */
const specOf = (record: LeaderElectionRecord): NonNullable<V1Lease["spec"]> => ({
  holderIdentity: record.holderIdentity,
  leaseDurationSeconds: record.leaseDurationSeconds,
  acquireTime: new V1MicroTime(record.acquireTimeMs),
  renewTime: new V1MicroTime(record.renewTimeMs),
  leaseTransitions: record.leaseTransitions,
})

/** client-node hands MicroTime fields over as the JSON string, although it types them as dates. */
const millisOf = (time: unknown): number => {
  if (time instanceof Date) return time.getTime()
  const parsed = typeof time === "string" ? Date.parse(time) : Number.NaN
  return Number.isNaN(parsed) ? 0 : parsed
}

const recordOf = (lease: V1Lease): LeaderElectionRecord => ({
  holderIdentity: lease.spec?.holderIdentity ?? "",
  leaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
  acquireTimeMs: millisOf(lease.spec?.acquireTime),
  renewTimeMs: millisOf(lease.spec?.renewTime),
  leaseTransitions: lease.spec?.leaseTransitions ?? 0,
})
