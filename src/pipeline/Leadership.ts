import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CreateSettings } from "../component/Component.ts"
import type { ComponentStartError } from "../component/ComponentStartError.ts"

/**
 * Leader election as the service sees it. Only the leader reads (its receiver and processor run in a
 * term); followers keep serving probes and metrics and wait for the lease. The contract, as client-go's:
 * - `lead` returns only once this replica holds the lease, and keeps it renewed while the term's scope is open;
 * - `lost` completes, with the reason, when a renewal did not succeed within the renew deadline: the term's
 *   work must stop now, before the lease can expire and another replica may start;
 * - closing the scope of a term that was not lost releases the lease, so a follower takes it at once.
 */
export interface Elector {
  /** The holder identity this replica writes into the lease. */
  readonly identity: string
  readonly lead: Effect.Effect<LeadershipTerm, never, Scope.Scope>
  /** The holder identity of the lease as this replica last read it; undefined while unknown or unheld. */
  readonly holder?: Effect.Effect<string | undefined>
}

/** One term of leadership, from acquiring the lease to losing or releasing it. */
export interface LeadershipTerm {
  /** Completes with the reason once this replica can no longer be sure it leads. */
  readonly lost: Effect.Effect<string>
}

/** The lease and its timings, from the service's leader-election settings. */
export interface LeaseSettings {
  readonly leaseName: string
  readonly leaseNamespace: string
  /** How long a lease holds, by an observer's own clock, since it last saw the lease change. */
  readonly leaseDurationMs: number
  /** How long a leader keeps trying to renew, since its last successful renewal, before it stops work. */
  readonly renewDeadlineMs: number
  /** Time between attempts to acquire or renew. */
  readonly retryPeriodMs: number
  /** Holder identity written into the lease. */
  readonly identity: string
}

/**
 * Offered by a receiver factory whose source can hold a lease (the `kube_exec` receiver: the Lease lives
 * in the cluster it reads): makes the elector from the receiver's config, with a client of its own.
 */
export type ElectorFactory<Config> = (
  config: Config,
  lease: LeaseSettings,
  settings: CreateSettings,
) => Effect.Effect<Elector, ComponentStartError, Scope.Scope>
