import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { Gpu } from "../../src/domain/Gpu.ts"
import type { GpuHealthSignals } from "../../src/domain/GpuHealth.ts"
import {
  commonVbiosByProduct,
  defaultHealthThresholds,
  type HealthContext,
  healthChanged,
  healthReasons,
  healthVerdict,
  readingHealth,
} from "../../src/domain/HealthVerdict.ts"

const context: HealthContext = { thresholds: defaultHealthThresholds }

/** What a healthy H100 of driver 570 reports. */
const healthyH100: GpuHealthSignals = {
  remappedRows: { correctable: 0, uncorrectable: 0, pending: false, failure: false },
  ecc: {
    enabled: true,
    volatileUncorrectable: 0,
    aggregateUncorrectable: 0,
    volatileCorrectable: 0,
    aggregateCorrectable: 0,
  },
  recoveryAction: "none",
  pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 16, max: 16 }, replays: 0 },
  clockEvents: [],
  vbios: "96.00.99.00.01",
}

/** What a healthy V100 reports: page retirement instead of row remapping. */
const healthyV100: GpuHealthSignals = {
  retiredPages: { singleBit: 0, doubleBit: 0, pending: false },
  ecc: { enabled: true, volatileUncorrectable: 0, aggregateUncorrectable: 0 },
  pcie: { linkGen: { current: 3, max: 3 }, linkWidth: { current: 16, max: 16 } },
  vbios: "88.00.4F.00.09",
}

const verdictOf = (signals: GpuHealthSignals, given: HealthContext = context) => {
  const { state, reasons, rmaEligible } = healthVerdict(signals, given)
  return { state, reasons, rmaEligible }
}

describe("healthVerdict", () => {
  it("finds nothing wrong with a healthy H100 or V100, and keeps every signal it was given", () => {
    expect(verdictOf(healthyH100)).toEqual({ state: "ok", reasons: [], rmaEligible: false })
    expect(verdictOf(healthyV100)).toEqual({ state: "ok", reasons: [], rmaEligible: false })
    expect(healthVerdict(healthyH100, context)).toMatchObject(healthyH100)
  })

  it("says nothing of signals the GPU does not report: absent is unknown, not zero", () => {
    expect(verdictOf({})).toEqual({ state: "ok", reasons: [], rmaEligible: false })
    expect(verdictOf({ pcie: { linkWidth: { current: 8 } } }).reasons).toEqual([])
    expect(verdictOf({ retiredPages: { pending: false } }).reasons).toEqual([])
  })

  it("fails a board whose row remapping failed and makes it RMA-eligible (NVIDIA's RMA criterion)", () => {
    expect(verdictOf({ ...healthyH100, remappedRows: { uncorrectable: 3, failure: true } })).toEqual({
      state: "failed",
      reasons: ["row-remap-failure"],
      rmaEligible: true,
    })
  })

  it("degrades a GPU whose remap waits for a reset, without an RMA", () => {
    expect(verdictOf({ ...healthyH100, remappedRows: { uncorrectable: 1, pending: true, failure: false } })).toEqual({
      state: "degraded",
      reasons: ["row-remap-pending"],
      rmaEligible: false,
    })
  })

  it("fails a board at 512 uncorrectable remapped rows, not at 511", () => {
    expect(verdictOf({ remappedRows: { uncorrectable: 511 } }).state).toBe("ok")
    expect(verdictOf({ remappedRows: { uncorrectable: 512 } })).toEqual({
      state: "failed",
      reasons: ["remapped-rows-limit"],
      rmaEligible: true,
    })
  })

  it("fails a board at 63 retired pages, single- and double-bit together, and degrades one with a retirement pending", () => {
    expect(verdictOf({ retiredPages: { singleBit: 40, doubleBit: 22 } }).state).toBe("ok")
    expect(verdictOf({ retiredPages: { singleBit: 40, doubleBit: 23 } })).toEqual({
      state: "failed",
      reasons: ["retired-pages-limit"],
      rmaEligible: true,
    })
    expect(verdictOf({ retiredPages: { doubleBit: 63 } }).reasons).toEqual(["retired-pages-limit"])
    expect(verdictOf({ retiredPages: { singleBit: 2, doubleBit: 1, pending: true } })).toEqual({
      state: "degraded",
      reasons: ["retired-pages-pending"],
      rmaEligible: false,
    })
  })

  it("degrades a GPU with volatile uncorrectable ECC errors above the limit", () => {
    expect(verdictOf({ ecc: { enabled: true, volatileUncorrectable: 1 } }).reasons).toEqual([
      "ecc-volatile-uncorrectable",
    ])
    expect(verdictOf({ ecc: { enabled: true, aggregateUncorrectable: 9, volatileCorrectable: 1000 } }).state).toBe("ok")
  })

  it("weighs the recovery action: a reset or a P2P drain degrades, a reboot or a drain and reset fails", () => {
    for (const action of ["reset", "drain-p2p", "bus-reset", "recover-imex-domain"]) {
      expect(verdictOf({ recoveryAction: action })).toEqual({
        state: "degraded",
        reasons: ["recovery-action"],
        rmaEligible: false,
      })
    }
    for (const action of ["reboot", "drain-and-reset", "system-reboot"]) {
      expect(verdictOf({ recoveryAction: action })).toEqual({
        state: "failed",
        reasons: ["recovery-action-severe"],
        rmaEligible: false,
      })
    }
    expect(verdictOf({ recoveryAction: "none" }).state).toBe("ok")
  })

  it("degrades a GPU whose PCIe link runs narrower than it can; a lower generation (power saving) is no reason", () => {
    expect(
      verdictOf({ pcie: { linkGen: { current: 5, max: 5 }, linkWidth: { current: 8, max: 16 } } }).reasons,
    ).toEqual(["pcie-width-reduced"])
    expect(verdictOf({ pcie: { linkGen: { current: 1, max: 5 }, linkWidth: { current: 16, max: 16 } } }).state).toBe(
      "ok",
    )
  })

  it("degrades a fabric-attached GPU whose fabric failed or is not healthy, never one without a fabric", () => {
    const gb200 = { state: "completed", status: "success", cliqueId: "2", clusterUuid: "889d2be1" }
    expect(verdictOf({ fabric: gb200 }).state).toBe("ok")
    expect(verdictOf({ fabric: { ...gb200, status: "nvlink-error" } }).reasons).toEqual(["fabric-unhealthy"])
    expect(verdictOf({ fabric: { ...gb200, summary: "unhealthy" } }).reasons).toEqual(["fabric-unhealthy"])
    expect(verdictOf({ fabric: { ...gb200, summary: "healthy" } }).state).toBe("ok")
    expect(verdictOf({ fabric: { state: "in-progress", status: "success" } }).state).toBe("ok")
    expect(verdictOf({ fabric: { state: "not-supported", summary: "unhealthy" } }).state).toBe("ok")
  })

  it("degrades a GPU whose VBIOS differs from the one its node's GPUs of the same product carry", () => {
    expect(verdictOf(healthyH100, { ...context, commonVbios: "96.00.99.00.02" }).reasons).toEqual(["vbios-mismatch"])
    expect(verdictOf(healthyH100, { ...context, commonVbios: "96.00.99.00.01" }).state).toBe("ok")
  })

  it("lists every reason that applies in table order; the state is the worst and RMA-eligible if any reason is", () => {
    expect(
      verdictOf({
        ...healthyH100,
        remappedRows: { uncorrectable: 600, pending: true, failure: true },
        ecc: { volatileUncorrectable: 4 },
        pcie: { linkWidth: { current: 4, max: 16 } },
      }),
    ).toEqual({
      state: "failed",
      reasons: [
        "row-remap-failure",
        "remapped-rows-limit",
        "row-remap-pending",
        "ecc-volatile-uncorrectable",
        "pcie-width-reduced",
      ],
      rmaEligible: true,
    })
  })

  it("applies the thresholds it is given", () => {
    const strict: HealthContext = {
      thresholds: { retiredPagesLimit: 10, remappedRowsLimit: 8, volatileUncorrectableLimit: 5 },
    }
    expect(verdictOf({ retiredPages: { singleBit: 10 } }, strict).reasons).toEqual(["retired-pages-limit"])
    expect(verdictOf({ remappedRows: { uncorrectable: 8 } }, strict).reasons).toEqual(["remapped-rows-limit"])
    expect(verdictOf({ ecc: { volatileUncorrectable: 5 } }, strict).state).toBe("ok")
    expect(verdictOf({ ecc: { volatileUncorrectable: 6 } }, strict).state).toBe("degraded")
  })
})

describe("the VBIOS most of a node's GPUs of one product carry", () => {
  const gpu = (index: number, product: string, vbios?: string): Gpu => ({
    index,
    uuid: `GPU-${index}`,
    product,
    ...(vbios === undefined ? {} : { health: { vbios } }),
  })

  it("is the majority per product; a tie names none, so no GPU is called out", () => {
    const common = commonVbiosByProduct([
      gpu(0, "H100", "96.00.99.00.01"),
      gpu(1, "H100", "96.00.99.00.01"),
      gpu(2, "H100", "96.00.99.00.02"),
      gpu(3, "L40S", "95.02.66.00.01"),
      gpu(4, "L40S", "95.02.66.00.02"),
      gpu(5, "L40S"),
    ])
    expect([...common]).toEqual([["H100", "96.00.99.00.01"]])
  })

  it("calls out only the odd GPU of the reading", () => {
    const gpus = [
      gpu(0, "H100", "96.00.99.00.01"),
      gpu(1, "H100", "96.00.99.00.02"),
      gpu(2, "H100", "96.00.99.00.01"),
      gpu(3, "A100"),
    ]
    const verdicts = readingHealth(gpus, defaultHealthThresholds)
    expect(verdicts.get("GPU-1")?.reasons).toEqual(["vbios-mismatch"])
    expect(verdicts.get("GPU-0")?.state).toBe("ok")
    expect(verdicts.has("GPU-3")).toBe(false)
  })
})

describe("a change of health", () => {
  it("is a change of state or reasons, never of a counter alone", () => {
    const before = healthVerdict({ ...healthyH100, ecc: { volatileCorrectable: 1 } }, context)
    expect(healthChanged(before, healthVerdict({ ...healthyH100, ecc: { volatileCorrectable: 900 } }, context))).toBe(
      false,
    )
    expect(healthChanged(before, healthVerdict({ ...healthyH100, remappedRows: { pending: true } }, context))).toBe(
      true,
    )
    const pending = healthVerdict({ remappedRows: { pending: true } }, context)
    const pendingAndNarrow = healthVerdict(
      { remappedRows: { pending: true }, pcie: { linkWidth: { current: 8, max: 16 } } },
      context,
    )
    expect(healthChanged(pending, pendingAndNarrow)).toBe(true)
  })
})

describe("docs/health.md", () => {
  it("holds the verdict table of the code: each reason, its state and whether it makes the board RMA-eligible, in order", () => {
    const page = readFileSync(new URL("../../docs/health.md", import.meta.url), "utf8")
    const section = page.slice(page.indexOf("## The verdict"), page.indexOf("## Settings"))
    const rows = section
      .split("\n")
      .filter((line) => /^\| `[a-z-]+` \|/.test(line))
      .map((line) => line.split("|").map((cell) => cell.trim()))
      .map(([, code, state, rma, when]) => ({ code, state, rma, when }))
    expect(rows).toEqual(
      healthReasons.map((reason) => ({
        code: `\`${reason.code}\``,
        state: reason.state,
        rma: reason.rmaEligible ? "yes" : "no",
        when: reason.when,
      })),
    )
  })
})
