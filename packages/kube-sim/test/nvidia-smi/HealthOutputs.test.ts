import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { GpuHealthSignals } from "../../../../src/domain/GpuHealth.ts"
import { parseCsvReading } from "../../../../src/nvsmi/CsvReadingParser.ts"
import { queryFieldsFor } from "../../../../src/nvsmi/QueryFields.ts"
import { parseXmlReading } from "../../../../src/nvsmi/XmlReadingParser.ts"
import { Fleet } from "../../src/catalog/Fleet.ts"
import { type GpuCondition, healthyCondition } from "../../src/catalog/GpuCondition.ts"
import { type ModelName, modelNames } from "../../src/catalog/GpuModel.ts"
import type { SimulatedHost } from "../../src/catalog/SimulatedHost.ts"
import { trueHealthState } from "../../src/ledger/TrueHealth.ts"
import { runNvidiaSmi } from "../../src/nvidia-smi/NvidiaSmi.ts"

const now = new Date("2026-03-01T10:00:00Z")

/** One host of each model on each driver release the fleet draws for it. */
const hostsByModelAndDriver = (): ReadonlyArray<SimulatedHost> => {
  const hosts = new Map<string, SimulatedHost>()
  for (const model of modelNames)
    for (let seed = 0; seed < 40; seed++) {
      const fleet = Fleet.generate({
        nodes: 4,
        modelMix: { [model]: 1 },
        seed: `health-${model}-${seed}`,
        clusterName: "c",
      })
      for (const host of fleet.hosts.values())
        if (host.failure === undefined) hosts.set(`${model}|${host.driver.version}`, host)
    }
  return [...hosts.values()]
}

/** The XML health signals of the host's GPUs, by UUID. */
const xmlSignals = (host: SimulatedHost): Map<string, GpuHealthSignals | undefined> => {
  const reading = parseXmlReading(runNvidiaSmi(host, ["-q", "-x"], now).stdout.toString())
  if (Result.isFailure(reading)) throw new Error(`XML of ${host.model.name}: ${String(reading.failure)}`)
  return new Map(reading.success.gpus.map((gpu) => [gpu.uuid ?? "", gpu.health]))
}

/** The CSV health signals, asked for as the service asks: each refused field leaves its group out. */
const csvSignals = (host: SimulatedHost): Map<string, GpuHealthSignals | undefined> => {
  const refused = new Set<string>()
  for (let attempt = 0; attempt < 20; attempt++) {
    // The platform fields are identity; drivers before 570 refuse them, and the service then reads XML.
    const fields = queryFieldsFor(refused).filter((field) => !field.startsWith("platform."))
    const outcome = runNvidiaSmi(host, [`--query-gpu=${fields.join(",")}`, "--format=csv,noheader"], now)
    const text = outcome.stdout.toString()
    const invalid = /^Field "(.+)" is not a valid field to query\./.exec(text)
    if (invalid !== null) {
      expect(outcome.exitCode).toBe(2)
      refused.add(invalid[1] ?? "")
      continue
    }
    const reading = parseCsvReading(text, { fields })
    if (Result.isFailure(reading)) throw new Error(`CSV of ${host.model.name}: ${String(reading.failure)}`)
    return new Map(reading.success.gpus.map((gpu) => [gpu.uuid ?? "", gpu.health]))
  }
  throw new Error(`the CSV query of ${host.model.name} kept being refused`)
}

/**
 * What `-q -x` says that no `--query-gpu` group the service asks for can: the replay counter; before 570
 * the recovery action (`gpu_reset_status`, which has no group); before 550 the fabric (its group needs
 * the clique fields of 550).
 */
const withoutXmlOnly = (signals: GpuHealthSignals | undefined, branch: number) => {
  if (signals === undefined) return undefined
  const { pcie, recoveryAction, fabric, ...rest } = signals
  const { replays: _replays, ...link } = pcie ?? {}
  return {
    ...rest,
    ...(pcie === undefined ? {} : { pcie: link }),
    ...(branch >= 570 && recoveryAction !== undefined ? { recoveryAction } : {}),
    ...(branch >= 550 && fabric !== undefined ? { fabric } : {}),
  }
}

const faults: ReadonlyArray<readonly [string, Partial<GpuCondition>]> = [
  ["healthy", {}],
  [
    "a row remap pending",
    { remapPending: true, remappedUncorrectable: 1, volatileUncorrectable: 1, aggregateUncorrectable: 1 },
  ],
  ["a row remap failure", { remapFailure: true, remappedUncorrectable: 2, aggregateUncorrectable: 2 }],
  [
    "a page retirement pending",
    { retirementPending: true, retiredDoubleBit: 1, volatileUncorrectable: 1, aggregateUncorrectable: 1 },
  ],
  ["the link at x8", { linkWidth: 8 }],
  ["the fabric down", { fabricDown: true }],
  ["a reset asked for", { recoveryAction: "reset" }],
  ["a drain and reset asked for", { recoveryAction: "drain-and-reset" }],
]

const modelsShown: ReadonlyArray<ModelName> = modelNames

describe("the health fields of every catalog model, read by the service's parser", () => {
  const hosts = hostsByModelAndDriver()

  it("cover every model, on several driver releases", () => {
    expect(new Set(hosts.map((host) => host.model.name))).toEqual(new Set(modelsShown))
    expect(hosts.length).toBeGreaterThan(modelsShown.length * 2)
  })

  it.each(faults)("read the same from -q -x and --query-gpu with %s", (_name, fault) => {
    for (const host of hosts) {
      const gpu = host.gpus.find((candidate) => candidate.identity.migProfiles.length === 0) ?? host.gpus[0]
      if (gpu === undefined) continue
      const before = gpu.identity.condition
      gpu.identity.condition = { ...healthyCondition, ...fault }
      try {
        const branch = Number(host.driver.version.split(".")[0])
        const xml = xmlSignals(host)
        const csv = csvSignals(host)
        const where = `${host.model.name} on ${host.driver.version}`
        expect(new Set(csv.keys()), where).toEqual(new Set(xml.keys()))
        for (const [uuid, signals] of xml) {
          expect(signals, where).toBeDefined()
          expect(withoutXmlOnly(csv.get(uuid), branch), `${where}, ${uuid}`).toEqual(withoutXmlOnly(signals, branch))
        }
      } finally {
        gpu.identity.condition = before
      }
    }
  })

  it("show each fault the board's generation reports in the signals the verdict reads", () => {
    for (const host of hosts) {
      const gpu = host.gpus.find((candidate) => candidate.identity.migProfiles.length === 0)
      if (gpu === undefined) continue
      const read = (condition: GpuCondition) => {
        gpu.identity.condition = condition
        return xmlSignals(host).get(gpu.identity.uuid)
      }
      const where = `${host.model.name} on ${host.driver.version}`
      try {
        const healthy = read(healthyCondition)
        expect(trueHealthState(healthyCondition)).toBe("ok")
        expect(healthy?.pcie?.linkWidth, where).toEqual({ current: 16, max: 16 })
        expect(healthy?.vbios, where).toBe(host.model.vbiosVersion)
        expect(read({ ...healthyCondition, linkWidth: 8 })?.pcie?.linkWidth, where).toEqual({ current: 8, max: 16 })
        expect(read({ ...healthyCondition, recoveryAction: "reset" })?.recoveryAction, where).toBe("reset")
        if (host.model.ecc) {
          expect(healthy?.ecc, where).toMatchObject({ enabled: true, volatileUncorrectable: 0 })
          expect(read({ ...healthyCondition, volatileUncorrectable: 2 })?.ecc?.volatileUncorrectable, where).toBe(2)
        }
        if (healthy?.remappedRows !== undefined && host.model.ecc)
          expect(read({ ...healthyCondition, remapFailure: true })?.remappedRows?.failure, where).toBe(true)
        if (host.model.architecture === "Turing")
          expect(read({ ...healthyCondition, retirementPending: true })?.retiredPages?.pending, where).toBe(true)
        if (host.model.architecture !== "Turing") expect(healthy?.retiredPages?.pending, where).toBeUndefined()
        if (host.rack !== undefined) {
          expect(healthy?.fabric, where).toMatchObject({ state: "completed", status: "success" })
          expect(read({ ...healthyCondition, fabricDown: true })?.fabric?.status, where).not.toBe("success")
        }
      } finally {
        gpu.identity.condition = healthyCondition
      }
    }
  })
})
