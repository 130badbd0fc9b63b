import { describe, expect, it } from "vitest"
import { Fleet } from "../../src/catalog/Fleet.ts"
import type { FleetModelName } from "../../src/catalog/GpuModel.ts"
import type { SimulatedHost } from "../../src/catalog/SimulatedHost.ts"
import { runNvidiaSmi } from "../../src/nvidia-smi/NvidiaSmi.ts"
import { parseReport } from "./SmiReport.ts"

const now = new Date("2026-08-04T11:44:30.123Z")

/** A host of one model, on the first driver release of the given branch when one is asked for. */
const hostOf = (model: FleetModelName, branch?: string, seed = "smi"): SimulatedHost => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const fleet = Fleet.generate({ nodes: 1, seed: `${seed}-${attempt}`, modelMix: { [model]: 1 }, clusterName: "t" })
    const host = [...fleet.hosts.values()][0]
    if (host !== undefined && (branch === undefined || host.driver.version.startsWith(branch))) return host
  }
  throw new Error(`no ${model} host on driver ${branch}`)
}

const smi = (host: SimulatedHost, ...argv: string[]) => {
  const outcome = runNvidiaSmi(host, argv, now)
  return {
    stdout: outcome.stdout.toString(),
    stderr: outcome.stderr.toString(),
    exitCode: outcome.exitCode,
  }
}

describe("nvidia-smi -q -x", () => {
  it("reports an 8-GPU H100 HGX node as a well-formed document of realistic size", () => {
    const host = hostOf("h100-hgx", "570")
    const outcome = smi(host, "-q", "-x")
    expect(outcome.exitCode).toBe(0)
    // A real 8 x H100 capture with its supported-clocks tables is about 206 KB.
    expect(outcome.stdout.length).toBeGreaterThan(100_000)
    expect(outcome.stdout.length).toBeLessThan(220_000)
    const report = parseReport(outcome.stdout)
    expect(report.root).toMatchObject({ attached_gpus: "8", driver_version: host.driver.version, cuda_version: "12.8" })
    expect(report.root.timestamp).toBe("Tue Aug  4 11:44:30 2026")
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).toEqual(host.gpus.map((gpu) => gpu.identity.uuid))
    expect(report.gpus.map((gpu) => gpu.fields.serial)).toEqual(host.gpus.map((gpu) => gpu.identity.serial))
    expect(report.gpus.map((gpu) => gpu.fields["pci/pci_bus_id"])).toEqual(report.gpus.map((gpu) => gpu.id))
    expect(report.gpus.map((gpu) => gpu.fields["platformInfo/module_id"])).toEqual(
      host.gpus.map((gpu) => String(gpu.slot.moduleId)),
    )
    expect(report.gpus[0]?.fields).toMatchObject({
      product_name: "NVIDIA H100 80GB HBM3",
      product_brand: "NVIDIA",
      product_architecture: "Hopper",
      "mig_mode/current_mig": "Disabled",
      "platformInfo/chassis_serial_number": "N/A",
    })
    expect(outcome.stdout).toContain('<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">')
  })

  it("uses gpu_module_id before driver 570 and DTD v13 from 580", () => {
    const old = parseReport(smi(hostOf("h100-hgx", "535"), "-q", "-x").stdout)
    expect(old.gpus[0]?.fields.gpu_module_id).toMatch(/^[1-8]$/)
    expect(old.gpus[0]?.fields["platformInfo/module_id"]).toBeUndefined()
    const recent = smi(hostOf("h100-hgx", "580"), "-q", "-x").stdout
    expect(recent).toContain("nvsmi_device_v13.dtd")
    expect(parseReport(recent).gpus[0]?.fields.pdi).toMatch(/^0x[0-9a-f]{16}$/)
  })

  it("reports a GB200 tray with its chassis serial and serials shared per module", () => {
    const host = hostOf("gb200-nvl72")
    const report = parseReport(smi(host, "-q", "-x").stdout)
    expect(report.gpus).toHaveLength(4)
    const serials = report.gpus.map((gpu) => gpu.fields.serial)
    expect(serials[0]).toBe(serials[1])
    expect(new Set(report.gpus.map((gpu) => gpu.fields["platformInfo/chassis_serial_number"]))).toEqual(
      new Set([host.rack?.chassisSerial]),
    )
    expect(report.gpus[0]?.fields["platformInfo/peer_type"]).toBe("Switch Connected")
  })

  it("lists the MIG devices of an A100 with MIG enabled", () => {
    const host = hostOf("a100-mig")
    const report = parseReport(smi(host, "-q", "-x").stdout)
    host.gpus.forEach((gpu, index) => {
      const enabled = gpu.identity.migProfiles.length > 0
      expect(report.gpus[index]?.fields["mig_mode/current_mig"]).toBe(enabled ? "Enabled" : "Disabled")
      expect(report.migDevices[index]).toBe(gpu.identity.migProfiles.length)
    })
    expect(report.migDevices.some((count) => count > 0)).toBe(true)
  })

  it("reports consumer cards with serial N/A and the GeForce brand", () => {
    const report = parseReport(smi(hostOf("rtx4090"), "-q", "-x").stdout)
    expect(report.gpus[0]?.fields).toMatchObject({
      serial: "N/A",
      product_brand: "GeForce",
      "mig_mode/current_mig": "N/A",
    })
  })

  it("honours -i", () => {
    const host = hostOf("h100-hgx")
    const target = host.gpus[5]
    const report = parseReport(smi(host, "-q", "-x", "-i", target?.identity.uuid ?? "").stdout)
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).toEqual([target?.identity.uuid])
    expect(report.root.attached_gpus).toBe("8")
  })
})

describe("nvidia-smi --query-gpu", () => {
  it("prints the fields in the order asked, with or without header and units", () => {
    const host = hostOf("h100-hgx", "570")
    const fields = "index,serial,uuid,name,pci.bus_id,mig.mode.current,memory.total,platform.module_id"
    const plain = smi(host, `--query-gpu=${fields}`, "--format=csv,noheader,nounits")
    expect(plain.exitCode).toBe(0)
    const lines = plain.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(8)
    const first = host.gpus[0]
    expect(lines[0]).toBe(
      `0, ${first?.identity.serial}, ${first?.identity.uuid}, NVIDIA H100 80GB HBM3, ${first?.slot.pciBusId}, Disabled, 81559, ${first?.slot.moduleId}`,
    )
    const withHeader = smi(host, "--query-gpu", "memory.total,serial", "--format=csv")
    expect(withHeader.stdout.split("\n")[0]).toBe("memory.total [MiB], serial")
    expect(withHeader.stdout.split("\n")[1]).toMatch(/^81559 MiB, \d{13}$/)
  })

  it("writes [N/A] for what a GPU does not have", () => {
    const outcome = smi(
      hostOf("rtx4090", "570"),
      "--query-gpu=serial,mig.mode.current,platform.chassis_serial_number",
      "--format=csv,noheader",
    )
    expect(outcome.stdout.split("\n")[0]).toBe("[N/A], [N/A], [N/A]")
  })

  it("rejects platform fields before driver 570, and unknown fields, like the real tool", () => {
    const old = smi(
      hostOf("h100-hgx", "535"),
      "--query-gpu=serial,platform.chassis_serial_number",
      "--format=csv,noheader",
    )
    expect(old).toEqual({
      stdout: 'Field "platform.chassis_serial_number" is not a valid field to query.\n\n',
      stderr: "",
      exitCode: 2,
    })
    expect(smi(hostOf("t4"), "--query-gpu=serial,cuda_version", "--format=csv").exitCode).toBe(2)
    expect(
      smi(hostOf("h100-hgx", "570"), "--query-gpu=platform.chassis_serial_number", "--format=csv,noheader").exitCode,
    ).toBe(0)
  })
})

describe("other invocations", () => {
  it("prints the human-readable report with -q, one section per GPU", () => {
    const host = hostOf("gb200-nvl72", "580")
    const text = smi(host, "-q").stdout
    const lines = text.split("\n")
    expect(lines.slice(0, 3)).toEqual(["", "==============NVSMI LOG==============", ""])
    const row = (label: string, value: string | undefined) => `${label.padEnd(55)}: ${value}`
    expect(lines).toContain(row("Driver Version", host.driver.version))
    for (const gpu of host.gpus) {
      expect(lines).toContain(`GPU ${gpu.slot.pciBusId}`)
      expect(lines).toContain(row("    GPU UUID", gpu.identity.uuid))
    }
    expect(lines).toContain(row("        Chassis Serial Number", host.rack?.chassisSerial))
    expect(text).not.toContain("<")
  })

  it("knows the wider set of --query-gpu properties", () => {
    const outcome = smi(
      hostOf("h100-hgx", "570"),
      "--query-gpu=clocks_event_reasons.active,temperature.gpu.tlimit,power.draw.average,fabric.state,remapped_rows.pending,c2c.mode",
      "--format=csv,noheader",
    )
    expect(outcome.exitCode).toBe(0)
    expect(outcome.stdout.split("\n")[0]).toMatch(/^0x0000000000000001, \d+, \d+\.\d\d W, Completed, No, \[N\/A\]$/)
  })

  it("lists GPUs and MIG devices with -L", () => {
    const host = hostOf("a100-mig")
    const listing = smi(host, "-L").stdout
    expect(listing).toContain(`GPU 0: NVIDIA A100-SXM4-80GB (UUID: ${host.gpus[0]?.identity.uuid})`)
    const migs = host.gpus.flatMap((gpu) => gpu.identity.migUuids)
    for (const uuid of migs) expect(listing).toContain(`(UUID: ${uuid})`)
    expect(listing).toMatch(/^ {2}MIG \d+g\.\d+gb +Device +\d+: \(UUID: MIG-/m)
  })

  it("prints the summary table without arguments", () => {
    const host = hostOf("t4")
    const table = smi(host).stdout.split("\n")
    expect(table[2]).toContain(`Driver Version: ${host.driver.version}`)
    for (const line of table.slice(1, 12)) if (line !== "") expect(line).toHaveLength(91)
  })

  it("refuses argument combinations it does not know with exit code 2", () => {
    expect(smi(hostOf("t4"), "--frobnicate").exitCode).toBe(2)
    expect(smi(hostOf("t4"), "-x").exitCode).toBe(2)
  })
})

describe("broken drivers", () => {
  const broken = (failure: SimulatedHost["failure"]) => {
    const host = hostOf("h100-hgx", "570", `broken-${failure}`)
    host.failure = failure
    return host
  }

  it("fails with exit 9 when the driver is not loaded", () => {
    expect(smi(broken("driver-not-loaded"), "-q", "-x")).toEqual({
      stdout:
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
      stderr: "",
      exitCode: 9,
    })
  })

  it("fails with exit 18 and the library version on a driver/library mismatch", () => {
    const outcome = smi(broken("nvml-mismatch"), "--query-gpu=serial", "--format=csv")
    expect(outcome.exitCode).toBe(18)
    expect(outcome.stdout).toMatch(
      /^Failed to initialize NVML: Driver\/library version mismatch\nNVML library version: 570\.\d+\n$/,
    )
  })

  it("says no devices were found", () => {
    expect(smi(broken("no-devices"), "-L")).toMatchObject({ stdout: "No devices were found\n", exitCode: 6 })
  })

  it("prints the lost GPU's device-handle line before the surviving GPUs' report", () => {
    const host = broken("device-handle")
    const outcome = smi(host, "-q", "-x")
    const [line, ...rest] = outcome.stdout.split("\n")
    expect(line).toMatch(
      /^Unable to determine the device handle for GPU1: [0-9a-f]{4}:[0-9a-f]{2}:00\.0: Unknown Error$/,
    )
    const report = parseReport(rest.join("\n"))
    expect(report.root.attached_gpus).toBe("8")
    expect(report.gpus.map((gpu) => gpu.fields.uuid)).not.toContain(host.gpus[1]?.identity.uuid)
    expect(report.gpus).toHaveLength(7)
    expect(outcome.exitCode).not.toBe(0)
  })
})
