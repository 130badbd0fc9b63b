import { describe, expect, it } from "vitest"
import {
  type CommandRun,
  csvQueryArgv,
  decideCommandOutcome,
  formatForDriverBranch,
  queryArgvFor,
  queryFormatFor,
  xmlQueryArgv,
} from "../../src/nvsmi/Command.ts"
import { queryFieldsFor } from "../../src/nvsmi/QueryFields.ts"

const run = (overrides: Partial<CommandRun>): CommandRun => ({
  mode: "auto",
  exitCode: 0,
  stdoutHead: "",
  stderr: "",
  ...overrides,
})

const csvRow =
  "0, GPU-aaaaaaaa-1111-2222-3333-444444444444, 1650000000001, NVIDIA H100, 00000000:01:00.0, Disabled, 570.1, [N/A], [N/A], [N/A], [N/A], [N/A], 1, [N/A]\n"

const rejectedField = 'Field "platform.chassis_serial_number" is not a valid field to query.\n\n'

describe("nvidia-smi argv", () => {
  it("runs nvidia-smi itself as argv[0] with the XML or CSV query", () => {
    expect(xmlQueryArgv).toStrictEqual(["nvidia-smi", "-q", "-x"])
    expect(csvQueryArgv).toStrictEqual([
      "nvidia-smi",
      "--query-gpu=index,uuid,serial,name,pci.bus_id,mig.mode.current,driver_version,platform.chassis_serial_number,platform.slot_number,platform.tray_index,platform.host_id,platform.peer_type,platform.module_id,platform.gpu_fabric_guid," +
        "retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending," +
        "remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure," +
        "ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total," +
        "gpu_recovery_action,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max," +
        "clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown," +
        "fabric.state,fabric.status,fabric.cliqueId,fabric.clusterUuid,fabric.health.summary,vbios_version",
      "--format=csv,noheader",
    ])
    expect(csvQueryArgv.join(" ")).not.toContain("cuda")
    expect(queryArgvFor("xml")).toBe(xmlQueryArgv)
    expect(queryArgvFor("csv")).toBe(csvQueryArgv)
    expect(queryArgvFor("xml", new Set(["vbios_version"]))).toBe(xmlQueryArgv)
  })

  it("asks a driver that refused health fields for the others, the older spelling of a group where it has one", () => {
    const argv = queryArgvFor(
      "csv",
      new Set(["gpu_recovery_action", "clocks_event_reasons.hw_slowdown", "fabric.health.summary"]),
    )
    const fields = (argv[1] ?? "").slice("--query-gpu=".length).split(",")
    expect(fields).not.toContain("gpu_recovery_action")
    expect(fields.filter((field) => field.startsWith("clocks_"))).toStrictEqual([
      "clocks_throttle_reasons.hw_slowdown",
      "clocks_throttle_reasons.hw_thermal_slowdown",
      "clocks_throttle_reasons.hw_power_brake_slowdown",
      "clocks_throttle_reasons.sw_thermal_slowdown",
    ])
    expect(fields.filter((field) => field.startsWith("fabric."))).toStrictEqual([
      "fabric.state",
      "fabric.status",
      "fabric.cliqueId",
      "fabric.clusterUuid",
    ])
    expect(fields.slice(0, 14)).toStrictEqual(queryFieldsFor(new Set()).slice(0, 14))
    expect(argv[2]).toBe("--format=csv,noheader")
  })

  it("asks for CSV first in auto mode unless the node settled on XML", () => {
    expect(queryFormatFor("auto", undefined)).toBe("csv")
    expect(queryFormatFor("auto", "xml")).toBe("xml")
    expect(queryFormatFor("auto", "csv")).toBe("csv")
    expect(queryFormatFor("xml", "csv")).toBe("xml")
    expect(queryFormatFor("csv", "xml")).toBe("csv")
  })
})

describe("decideCommandOutcome", () => {
  it("parses a successful run in the format it asked for, the one remembered in auto mode", () => {
    expect(decideCommandOutcome(run({ stdoutHead: csvRow }))).toStrictEqual({ _tag: "Parse", format: "csv" })
    expect(decideCommandOutcome(run({ mode: "xml", stdoutHead: "<?xml" }))).toStrictEqual({
      _tag: "Parse",
      format: "xml",
    })
    expect(decideCommandOutcome(run({ remembered: "xml", stdoutHead: "<?xml" }))).toStrictEqual({
      _tag: "Parse",
      format: "xml",
    })
  })

  it("falls back to XML in auto mode when the driver rejects a query field (exit code 2, message on stdout)", () => {
    expect(decideCommandOutcome(run({ exitCode: 2, stdoutHead: rejectedField }))).toStrictEqual({
      _tag: "FallBackToXml",
      field: "platform.chassis_serial_number",
      remember: "xml",
    })
    expect(
      decideCommandOutcome(run({ exitCode: 2, stderr: "Field “platform.module_id” is not a valid field to query." })),
    ).toMatchObject({ _tag: "FallBackToXml", field: "platform.module_id" })
  })

  it("leaves out the group of a refused health field and runs again, in auto and in csv mode", () => {
    const refusal = (field: string) => `Field "${field}" is not a valid field to query.\n\n`
    expect(decideCommandOutcome(run({ exitCode: 2, stdoutHead: refusal("ecc.mode.current") }))).toStrictEqual({
      _tag: "LeaveOutHealthField",
      field: "ecc.mode.current",
      refused: new Set(["ecc.mode.current"]),
    })
    expect(
      decideCommandOutcome(
        run({
          mode: "csv",
          refused: new Set(["ecc.mode.current"]),
          exitCode: 2,
          stdoutHead: refusal("fabric.health.summary"),
        }),
      ),
    ).toStrictEqual({
      _tag: "LeaveOutHealthField",
      field: "fabric.health.summary",
      refused: new Set(["ecc.mode.current", "fabric.health.summary"]),
    })
  })

  it("treats the refusal of a health field it no longer asks for as an identity field's", () => {
    const outcome = decideCommandOutcome(
      run({
        refused: new Set(["vbios_version"]),
        exitCode: 2,
        stdoutHead: 'Field "vbios_version" is not a valid field to query.\n',
      }),
    )
    expect(outcome).toStrictEqual({ _tag: "FallBackToXml", field: "vbios_version", remember: "xml" })
  })

  it("fails with the rejected field in csv mode", () => {
    const outcome = decideCommandOutcome(run({ mode: "csv", exitCode: 2, stdoutHead: rejectedField }))
    expect(outcome._tag === "Fail" && outcome.error).toMatchObject({
      kind: "unsupported-query-field",
      field: "platform.chassis_serial_number",
    })
  })

  it("still parses a document printed with a non-zero exit, as when a GPU's device handle failed", () => {
    const stdoutHead = `Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n<?xml version="1.0" ?>\n<nvidia_smi_log>`
    expect(decideCommandOutcome(run({ mode: "xml", exitCode: 15, stdoutHead }))).toStrictEqual({
      _tag: "Parse",
      format: "xml",
    })
    expect(decideCommandOutcome(run({ exitCode: 255, stdoutHead: csvRow }))._tag).toBe("Parse")
  })

  it("fails with the typed error nvidia-smi printed instead of a document", () => {
    const failure = (overrides: Partial<CommandRun>) => {
      const outcome = decideCommandOutcome(run(overrides))
      return outcome._tag === "Fail" ? outcome.error.kind : outcome._tag
    }
    expect(
      failure({
        exitCode: 9,
        stdoutHead:
          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
      }),
    ).toBe("driver-not-loaded")
    expect(failure({ exitCode: 9 })).toBe("driver-not-loaded")
    expect(failure({ exitCode: 6, stdoutHead: "No devices were found\n" })).toBe("no-devices")
    expect(
      failure({
        mode: "xml",
        exitCode: 18,
        stdoutHead: "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n",
      }),
    ).toBe("nvml-version-mismatch")
    expect(
      failure({
        mode: "xml",
        exitCode: 15,
        stdoutHead: "Unable to determine the device handle for GPU 0000:34:00.0: Unknown Error\n",
      }),
    ).toBe("device-handle")
  })

  it("fails with command-failed, exit code and a short excerpt for anything else", () => {
    const outcome = decideCommandOutcome(run({ exitCode: 127, stderr: `exec failed\n${"x".repeat(400)}` }))
    expect(outcome._tag === "Fail" && outcome.error).toMatchObject({ kind: "command-failed", exitCode: 127 })
    expect(outcome._tag === "Fail" && outcome.error._tag === "CommandFailed" && outcome.error.excerpt.length).toBe(120)
  })
})

describe("formatForDriverBranch", () => {
  it("starts nodes labelled with a driver before 570 on XML, and leaves the others to the CSV query", () => {
    expect(formatForDriverBranch(535)).toBe("xml")
    expect(formatForDriverBranch(550)).toBe("xml")
    expect(formatForDriverBranch(570)).toBeUndefined()
    expect(formatForDriverBranch(undefined)).toBeUndefined()
  })
})
