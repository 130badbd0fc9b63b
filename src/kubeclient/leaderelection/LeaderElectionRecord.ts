/**
 * client-go's leader election, as a pure step: given the lease as read now and what this replica last
 * observed of it, acquire, renew or wait. A lease expires by the observer's own clock, `leaseDuration`
 * after it last saw the record change (`observedAtMs`), never by comparing the holder's `renewTime` with
 * local time, so clock skew between replicas does not matter. An empty holder means free: take it at once.
 */

/** The spec of a coordination.k8s.io/v1 Lease, times in milliseconds since the epoch. */
export interface LeaderElectionRecord {
  readonly holderIdentity: string
  readonly leaseDurationSeconds: number
  readonly acquireTimeMs: number
  readonly renewTimeMs: number
  readonly leaseTransitions: number
}

/** The record this replica last saw change, and when, by its own clock (client-go's observedRecord and observedTime). */
export interface ObservedRecord {
  readonly record: LeaderElectionRecord
  readonly atMs: number
}

export type LeaseDecision =
  /** No lease yet: create it, holding it. */
  | { readonly _tag: "Create"; readonly record: LeaderElectionRecord }
  /** Write this record over the lease as read (compare-and-set on its resourceVersion): acquire or renew. */
  | { readonly _tag: "Update"; readonly record: LeaderElectionRecord; readonly renewal: boolean }
  /** Another replica holds a lease that has not expired by this replica's clock. */
  | { readonly _tag: "Held"; readonly holder: string; readonly expiresAtMs: number }

export interface ElectionStep {
  readonly identity: string
  readonly leaseDurationSeconds: number
  readonly nowMs: number
  /** What this replica observed before this step; absent at first. */
  readonly observed: ObservedRecord | undefined
  /** The lease's record as read now; absent when there is no lease. */
  readonly current: LeaderElectionRecord | undefined
}

export const sameRecord = (a: LeaderElectionRecord, b: LeaderElectionRecord): boolean =>
  a.holderIdentity === b.holderIdentity &&
  a.leaseDurationSeconds === b.leaseDurationSeconds &&
  a.acquireTimeMs === b.acquireTimeMs &&
  a.renewTimeMs === b.renewTimeMs &&
  a.leaseTransitions === b.leaseTransitions

/** What the replica has observed after reading `current`: the same observation while the record is unchanged. */
export const observe = (
  observed: ObservedRecord | undefined,
  current: LeaderElectionRecord,
  nowMs: number,
): ObservedRecord =>
  observed !== undefined && sameRecord(observed.record, current) ? observed : { record: current, atMs: nowMs }

/** When the observed lease expires by this replica's clock. */
export const expiresAtMs = (observed: ObservedRecord): number =>
  observed.atMs + observed.record.leaseDurationSeconds * 1000

/** One attempt of client-go's `tryAcquireOrRenew`: the decision and what the replica has now observed. */
export const decide = (
  step: ElectionStep,
): { readonly decision: LeaseDecision; readonly observed: ObservedRecord | undefined } => {
  const held = (transitions: number, acquireTimeMs: number): LeaderElectionRecord => ({
    holderIdentity: step.identity,
    leaseDurationSeconds: step.leaseDurationSeconds,
    acquireTimeMs,
    renewTimeMs: step.nowMs,
    leaseTransitions: transitions,
  })
  if (step.current === undefined) {
    return { decision: { _tag: "Create", record: held(0, step.nowMs) }, observed: step.observed }
  }
  const observed = observe(step.observed, step.current, step.nowMs)
  const holder = observed.record.holderIdentity
  const leading = holder === step.identity
  if (holder !== "" && !leading && expiresAtMs(observed) > step.nowMs) {
    return { decision: { _tag: "Held", holder, expiresAtMs: expiresAtMs(observed) }, observed }
  }
  const record = leading
    ? held(step.current.leaseTransitions, step.current.acquireTimeMs)
    : held(step.current.leaseTransitions + 1, step.nowMs)
  return { decision: { _tag: "Update", record, renewal: leading }, observed }
}

/**
 * The record a leader writes when it stops on purpose (client-go's ReleaseOnCancel): no holder, a
 * one-second duration, the same transitions, so a follower takes the lease at its next attempt.
 */
export const releasedRecord = (held: LeaderElectionRecord, nowMs: number): LeaderElectionRecord => ({
  holderIdentity: "",
  leaseDurationSeconds: 1,
  acquireTimeMs: nowMs,
  renewTimeMs: nowMs,
  leaseTransitions: held.leaseTransitions,
})
