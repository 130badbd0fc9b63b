import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { CoordinationV1Api, KubeConfig } from "@kubernetes/client-node"
import { Clock, Effect, Exit, Fiber, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Elector, LeaseSettings } from "../../../src/pipeline/Leadership.ts"
import { factory } from "../../../src/receiver/kube/KubeExecFactory.ts"

const namespace = "gpu-serials"
const timings = { leaseDurationMs: 2_000, renewDeadlineMs: 1_200, retryPeriodMs: 200 }
const hourMs = 3_600_000

/** A clock `shiftMs` off the real one: the elector must not care. */
const shiftedClock = (shiftMs: number): Clock.Clock => {
  const real = Effect.runSync(Clock.clockWith(Effect.succeed))
  return {
    currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + shiftMs,
    currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + shiftMs),
    currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(shiftMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(shiftMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration),
  }
}

interface RunningTerm {
  acquiredAtMs?: number
  lostAtMs?: number
  reason?: string
  /** Closes the term (releasing the lease unless it was lost) and the elector's loop. */
  stop(): Promise<void>
}

const waitFor = async (what: string, condition: () => boolean, timeoutMs = 15_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("leader election against the simulated cluster", () => {
  let cluster: SimulatedCluster
  const kubeconfigs = new Map<string, string>()
  const running: Array<RunningTerm> = []

  beforeAll(async () => {
    cluster = await startSimulatedCluster({ nodes: 1, execLatency: 0 })
    for (const name of ["replica-a", "replica-b"]) kubeconfigs.set(name, (await cluster.addClient(name)).kubeconfigPath)
  })

  afterAll(async () => {
    for (const term of running) await term.stop()
    await cluster.close()
  })

  const electorOf = (client: string, leaseName: string, overrides: Partial<typeof timings> = {}): Promise<Elector> => {
    const lease: LeaseSettings = { leaseName, leaseNamespace: namespace, identity: client, ...timings, ...overrides }
    return Effect.runPromise(
      Effect.scoped(
        factory.elector({ ...factory.defaultConfig, kubeconfig: kubeconfigs.get(client) ?? "" }, lease, {
          id: "kube_exec",
          clusterName: "test",
          serviceVersion: "0.0.0",
        }),
      ).pipe(Effect.orDie),
    )
  }

  /** Runs one term of an elector: acquire, then wait for the loss, recording when each happened. */
  const term = (elector: Elector, clock?: Clock.Clock): RunningTerm => {
    const scope = Effect.runSync(Scope.make())
    const running: RunningTerm = { stop: async () => {} }
    const lead = elector.lead.pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          running.acquiredAtMs = Date.now()
        }),
      ),
      Effect.flatMap((leadership) => leadership.lost),
      Effect.tap((reason) =>
        Effect.sync(() => {
          running.lostAtMs = Date.now()
          running.reason = reason
        }),
      ),
      Scope.provide(scope),
    )
    const fiber = Effect.runFork(clock === undefined ? lead : lead.pipe(Effect.provideService(Clock.Clock, clock)))
    running.stop = () => Effect.runPromise(Fiber.interrupt(fiber).pipe(Effect.andThen(Scope.close(scope, Exit.void))))
    return running
  }

  const leaseOf = async (name: string) => {
    const config = new KubeConfig()
    config.loadFromFile(cluster.kubeconfigPath)
    return (await config.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace, name })).spec
  }

  it("lets one replica lead while the other follows, and hands over at once on release", async () => {
    // A lease far longer than the test waits: replica-b can only come to lead through replica-a's release.
    const longLease = { leaseDurationMs: 120_000 }
    const a = term(await electorOf("replica-a", "handover", longLease))
    running.push(a)
    await waitFor("replica-a to lead", () => a.acquiredAtMs !== undefined)
    const b = term(await electorOf("replica-b", "handover", longLease))
    running.push(b)
    const renewedAt = async () => new Date((await leaseOf("handover"))?.renewTime ?? 0).getTime()
    const firstRenewal = await renewedAt()
    // Several retry periods: replica-a keeps renewing, so replica-b keeps following.
    await new Promise((resolve) => setTimeout(resolve, timings.retryPeriodMs * 5))
    expect(b.acquiredAtMs).toBeUndefined()
    expect(a.lostAtMs).toBeUndefined()
    expect(await leaseOf("handover")).toMatchObject({ holderIdentity: "replica-a", leaseTransitions: 0 })
    expect(await renewedAt()).toBeGreaterThan(firstRenewal)
    await a.stop()
    await waitFor("replica-b to lead", () => b.acquiredAtMs !== undefined)
    expect(await leaseOf("handover")).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 })
    await b.stop()
    expect(await leaseOf("handover")).toMatchObject({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaseTransitions: 1,
    })
  })

  it("takes over once the leader stops renewing, after the lease duration", async () => {
    const a = term(await electorOf("replica-a", "crash"))
    running.push(a)
    await waitFor("replica-a to lead", () => a.acquiredAtMs !== undefined)
    const b = term(await electorOf("replica-b", "crash"))
    running.push(b)
    // replica-a can no longer reach its lease: as if it had died, it neither renews nor releases.
    cluster.access.deny({ client: "replica-a", resource: "leases" })
    const cutAtMs = Date.now()
    try {
      await waitFor("replica-b to lead", () => b.acquiredAtMs !== undefined)
      expect(a.lostAtMs).toBeDefined()
      expect(b.acquiredAtMs ?? 0).toBeGreaterThanOrEqual(a.lostAtMs ?? Number.POSITIVE_INFINITY)
      // Lease duration plus a jittered retry period, with slack.
      expect((b.acquiredAtMs ?? 0) - cutAtMs).toBeLessThan(timings.leaseDurationMs + 3 * timings.retryPeriodMs + 2_000)
      expect(await leaseOf("crash")).toMatchObject({ holderIdentity: "replica-b", leaseTransitions: 1 })
    } finally {
      cluster.access.allowAll()
    }
  })

  const renewalFaults = {
    "fail with 503": { faults: [{ kind: "server-error", status: 503, times: 1_000 }], reason: /HTTP 503/ },
    hang: { faults: [{ kind: "hang", times: 1_000 }], reason: /could not renew the lease within 1s 200ms/ },
    // The last try before the renew deadline runs out of time; the answer the server gave before names the cause.
    "fail with 503, then hang": {
      faults: [
        { kind: "server-error", status: 503, times: 2 },
        { kind: "hang", times: 1_000 },
      ],
      reason: /could not renew the lease within 1s 200ms: .*HTTP 503/,
    },
  } as const
  for (const [name, { faults, reason }] of Object.entries(renewalFaults)) {
    it(`stops a leader whose renewals ${name} before the other acquires`, async () => {
      const leaseName = `renewal-${name.replaceAll(/[^a-z0-9]+/g, "-")}`
      const a = term(await electorOf("replica-a", leaseName))
      running.push(a)
      await waitFor("replica-a to lead", () => a.acquiredAtMs !== undefined)
      const b = term(await electorOf("replica-b", leaseName))
      running.push(b)
      const match = { client: "replica-a", resource: "leases" }
      for (const fault of faults) cluster.faults.inject({ ...fault, match })
      try {
        await waitFor("replica-b to lead", () => b.acquiredAtMs !== undefined)
        expect(a.lostAtMs).toBeDefined()
        expect(a.reason).toMatch(reason)
        expect(b.acquiredAtMs ?? 0).toBeGreaterThanOrEqual(a.lostAtMs ?? Number.POSITIVE_INFINITY)
      } finally {
        cluster.faults.clear()
      }
    })
  }

  it("does not let a replica whose clock is an hour off steal a live lease", async () => {
    const a = term(await electorOf("replica-a", "skew"))
    running.push(a)
    await waitFor("replica-a to lead", () => a.acquiredAtMs !== undefined)
    const ahead = term(await electorOf("replica-b", "skew"), shiftedClock(hourMs))
    running.push(ahead)
    await new Promise((resolve) => setTimeout(resolve, timings.leaseDurationMs * 2))
    expect(ahead.acquiredAtMs).toBeUndefined()
    expect(a.lostAtMs).toBeUndefined()
    expect(await leaseOf("skew")).toMatchObject({ holderIdentity: "replica-a" })
  })
})
