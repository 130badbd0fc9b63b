import { describe, expect, it } from "vitest"
import {
  decide,
  type LeaderElectionRecord,
  type ObservedRecord,
  releasedRecord,
} from "../../../src/kubeclient/leaderelection/LeaderElectionRecord.ts"

const hour = 3_600_000
const t0 = 1_700_000_000_000

const heldBy = (holderIdentity: string, renewTimeMs: number, leaseTransitions = 4): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  acquireTimeMs: t0 - 60_000,
  renewTimeMs,
  leaseTransitions,
})

const step = (
  nowMs: number,
  current: LeaderElectionRecord | undefined,
  observed: ObservedRecord | undefined,
  identity = "replica-a",
) => decide({ identity, leaseDurationSeconds: 15, nowMs, observed, current })

describe("leader election decisions (client-go tryAcquireOrRenew)", () => {
  it("creates the lease when there is none, holding it from now", () => {
    const { decision } = step(t0, undefined, undefined)
    expect(decision).toEqual({
      _tag: "Create",
      record: {
        holderIdentity: "replica-a",
        leaseDurationSeconds: 15,
        acquireTimeMs: t0,
        renewTimeMs: t0,
        leaseTransitions: 0,
      },
    })
  })

  it("takes a free lease (no holder) at once, counting a transition", () => {
    const free = releasedRecord(heldBy("replica-b", t0), t0)
    const { decision } = step(t0 + 1, free, undefined)
    expect(decision).toMatchObject({
      _tag: "Update",
      renewal: false,
      record: { holderIdentity: "replica-a", acquireTimeMs: t0 + 1, renewTimeMs: t0 + 1, leaseTransitions: 5 },
    })
  })

  it("respects another's lease until it has not changed for the lease duration by the observer's clock", () => {
    const record = heldBy("replica-b", t0)
    const first = step(t0, record, undefined)
    expect(first.decision).toEqual({ _tag: "Held", holder: "replica-b", expiresAtMs: t0 + 15_000 })
    const later = step(t0 + 14_999, record, first.observed)
    expect(later.decision._tag).toBe("Held")
    expect(later.observed).toEqual(first.observed)
    const expired = step(t0 + 15_000, record, later.observed)
    expect(expired.decision).toMatchObject({
      _tag: "Update",
      record: { holderIdentity: "replica-a", acquireTimeMs: t0 + 15_000, leaseTransitions: 5 },
    })
  })

  it("starts the lease duration again whenever the holder renews", () => {
    const first = step(t0, heldBy("replica-b", t0), undefined)
    const renewed = heldBy("replica-b", t0 + 2_000)
    const next = step(t0 + 10_000, renewed, first.observed)
    expect(next.observed).toEqual({ record: renewed, atMs: t0 + 10_000 })
    expect(step(t0 + 20_000, renewed, next.observed).decision).toMatchObject({ _tag: "Held", expiresAtMs: t0 + 25_000 })
  })

  it("renews its own lease keeping the acquire time and the transitions", () => {
    const own = heldBy("replica-a", t0)
    const { decision } = step(t0 + 2_000, own, { record: own, atMs: t0 })
    expect(decision).toEqual({
      _tag: "Update",
      renewal: true,
      record: { ...own, renewTimeMs: t0 + 2_000 },
    })
  })

  it("ignores the holder's renewTime: clocks an hour ahead or behind change nothing", () => {
    for (const skew of [hour, -hour]) {
      const record = heldBy("replica-b", t0 + skew)
      const first = step(t0, record, undefined)
      expect(first.decision).toEqual({ _tag: "Held", holder: "replica-b", expiresAtMs: t0 + 15_000 })
      expect(step(t0 + 14_000, record, first.observed).decision._tag).toBe("Held")
      expect(step(t0 + 15_000, record, first.observed).decision._tag).toBe("Update")
    }
  })

  it("a replica whose own clock jumps still waits a full lease duration from when it saw the record change", () => {
    const record = heldBy("replica-b", t0)
    const first = step(t0 + hour, record, undefined)
    expect(first.decision).toMatchObject({ _tag: "Held", expiresAtMs: t0 + hour + 15_000 })
  })

  it("releases with no holder, a one-second duration and the same transitions", () => {
    expect(releasedRecord(heldBy("replica-a", t0, 7), t0 + 5)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTimeMs: t0 + 5,
      renewTimeMs: t0 + 5,
      leaseTransitions: 7,
    })
  })
})
