import { describe, expect, it } from "vitest"
import { outputLimits } from "../../src/nvsmi/OutputLimits.ts"
import { parseXmlReading } from "../../src/nvsmi/XmlReadingParser.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444"

const documentOf = (health: string): string =>
  '<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>570.1</driver_version>' +
  `<gpu id="00000000:01:00.0"><serial>1650000000001</serial><uuid>${uuid}</uuid>${health}</gpu></nvidia_smi_log>\n`

const healthOf = (health: string) => readingFrom(parseXmlReading(documentOf(health))).gpus[0]?.health

describe("health signals of nvidia-smi -q -x", () => {
  it("reads retired pages with pending_blacklist on drivers that have no pending_retirement", () => {
    expect(
      healthOf(
        "<retired_pages><multiple_single_bit_retirement><retired_count>12</retired_count>" +
          "<retired_pagelist><retired_page><retired_page_address>0x1</retired_page_address></retired_page></retired_pagelist>" +
          "</multiple_single_bit_retirement><double_bit_retirement><retired_count>3</retired_count></double_bit_retirement>" +
          "<pending_blacklist>Yes</pending_blacklist></retired_pages>",
      ),
    ).toStrictEqual({ retiredPages: { singleBit: 12, doubleBit: 3, pending: true } })
  })

  it("prefers pending_retirement over pending_blacklist when the driver prints both", () => {
    expect(
      healthOf(
        "<retired_pages><pending_blacklist>No</pending_blacklist><pending_retirement>Yes</pending_retirement></retired_pages>",
      ),
    ).toStrictEqual({ retiredPages: { pending: true } })
  })

  it("reads remapped rows, a pending remap and a remap failure", () => {
    expect(
      healthOf(
        "<remapped_rows><remapped_row_corr>4</remapped_row_corr><remapped_row_unc>512</remapped_row_unc>" +
          "<remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>Yes</remapped_row_failure>" +
          "<row_remapper_histogram><row_remapper_histogram_max>3968 bank(s)</row_remapper_histogram_max></row_remapper_histogram></remapped_rows>",
      ),
    ).toStrictEqual({ remappedRows: { correctable: 4, uncorrectable: 512, pending: true, failure: true } })
  })

  it("sums the SRAM and DRAM counters of v12+ (parity and SECDED too), and takes the totals of older layouts", () => {
    const v12 =
      "<ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Disabled</pending_ecc></ecc_mode><ecc_errors>" +
      "<volatile><sram_correctable>2</sram_correctable><sram_uncorrectable_parity>1</sram_uncorrectable_parity>" +
      "<sram_uncorrectable_secded>2</sram_uncorrectable_secded><dram_correctable>5</dram_correctable><dram_uncorrectable>4</dram_uncorrectable></volatile>" +
      "<aggregate><sram_correctable>10</sram_correctable><sram_uncorrectable>N/A</sram_uncorrectable>" +
      "<dram_correctable>20</dram_correctable><dram_uncorrectable>6</dram_uncorrectable><sram_threshold_exceeded>No</sram_threshold_exceeded></aggregate>" +
      "<aggregate_uncorrectable_sram_sources><sram_l2>9</sram_l2></aggregate_uncorrectable_sram_sources></ecc_errors>"
    expect(healthOf(v12)).toStrictEqual({
      ecc: {
        enabled: true,
        volatileUncorrectable: 7,
        aggregateUncorrectable: 6,
        volatileCorrectable: 7,
        aggregateCorrectable: 30,
      },
    })
    const v10 =
      "<ecc_mode><current_ecc>Disabled</current_ecc></ecc_mode><ecc_errors>" +
      "<volatile><single_bit><device_memory>3</device_memory><register_file>1</register_file><total>4</total></single_bit>" +
      "<double_bit><device_memory>0</device_memory><total>0</total></double_bit></volatile>" +
      "<aggregate><single_bit><total>N/A</total></single_bit><double_bit><total>N/A</total></double_bit></aggregate></ecc_errors>"
    expect(healthOf(v10)).toStrictEqual({ ecc: { enabled: false, volatileUncorrectable: 0, volatileCorrectable: 4 } })
  })

  it("reads the recovery action, else the reset status before it, lower-case with dashes", () => {
    expect(healthOf("<gpu_recovery_action>Drain P2P</gpu_recovery_action>")).toStrictEqual({
      recoveryAction: "drain-p2p",
    })
    expect(healthOf("<gpu_recovery_action>None</gpu_recovery_action>")).toStrictEqual({ recoveryAction: "none" })
    expect(
      healthOf(
        "<gpu_reset_status><reset_required>Requested functionality has been deprecated</reset_required></gpu_reset_status>" +
          "<gpu_recovery_action>Reboot</gpu_recovery_action>",
      ),
    ).toStrictEqual({ recoveryAction: "reboot" })
    const resetStatus = (required: string, drain: string) =>
      healthOf(
        `<gpu_reset_status><reset_required>${required}</reset_required><drain_and_reset_recommended>${drain}</drain_and_reset_recommended></gpu_reset_status>`,
      )
    expect(resetStatus("No", "N/A")).toStrictEqual({ recoveryAction: "none" })
    expect(resetStatus("Yes", "No")).toStrictEqual({ recoveryAction: "reset" })
    expect(resetStatus("Yes", "Yes")).toStrictEqual({ recoveryAction: "drain-and-reset" })
    expect(resetStatus("N/A", "N/A")).toBeUndefined()
  })

  it("reads a bracketed [GPU requires reset] in a health field as a reset, and keeps the GPU", () => {
    const reading = readingFrom(
      parseXmlReading(
        documentOf(
          "<vbios_version>[GPU requires reset]</vbios_version><gpu_recovery_action>[GPU requires reset]</gpu_recovery_action>" +
            "<remapped_rows><remapped_row_pending>[GPU requires reset]</remapped_row_pending></remapped_rows>",
        ),
      ),
    )
    expect(reading.failures).toStrictEqual([])
    expect(reading.gpus).toStrictEqual([
      { index: 0, uuid, serial: "1650000000001", pciBusId: "00000000:01:00.0", health: { recoveryAction: "reset" } },
    ])
  })

  it("still fails a GPU that announces [GPU requires reset] in an identity field", () => {
    const reading = readingFrom(
      parseXmlReading(
        `<?xml version="1.0" ?>\n<nvidia_smi_log><gpu id="00000000:01:00.0"><serial>[GPU requires reset]</serial><uuid>${uuid}</uuid></gpu>` +
          `<gpu id="00000000:02:00.0"><uuid>GPU-bbbbbbbb-1111-2222-3333-444444444444</uuid><vbios_version>1</vbios_version></gpu></nvidia_smi_log>`,
      ),
    )
    expect(reading.failures.map((failure) => failure.kind)).toStrictEqual(["requires-reset"])
    expect(reading.gpus.map((gpu) => gpu.health)).toStrictEqual([{ vbios: "1" }])
  })

  it("reads the PCIe link as the system allows it (max_link_gen, not the device's own maximum) and 16x as 16", () => {
    expect(
      healthOf(
        "<pci><pci_bus_id>00000000:01:00.0</pci_bus_id><pci_gpu_link_info><pcie_gen><max_link_gen>5</max_link_gen>" +
          "<current_link_gen>4</current_link_gen><device_current_link_gen>4</device_current_link_gen><max_device_link_gen>6</max_device_link_gen>" +
          "</pcie_gen><link_widths><max_link_width>16x</max_link_width><current_link_width>8x</current_link_width></link_widths></pci_gpu_link_info>" +
          "<replay_counter>123456789012</replay_counter><replay_rollover_counter>0</replay_rollover_counter></pci>",
      ),
    ).toStrictEqual({
      pcie: { linkGen: { current: 4, max: 5 }, linkWidth: { current: 8, max: 16 }, replays: 123456789012 },
    })
  })

  it("keeps the active hardware clock-event reasons, in both spellings, and none of the others", () => {
    const reasons = (section: string, prefix: string, active: ReadonlyArray<string>) =>
      healthOf(
        `<${section}>` +
          [
            "gpu_idle",
            "sw_power_cap",
            "hw_slowdown",
            "hw_thermal_slowdown",
            "hw_power_brake_slowdown",
            "sw_thermal_slowdown",
          ]
            .map((name) => `<${prefix}_${name}>${active.includes(name) ? "Active" : "Not Active"}</${prefix}_${name}>`)
            .join("") +
          `</${section}>`,
      )
    expect(
      reasons("clocks_event_reasons", "clocks_event_reason", ["gpu_idle", "hw_slowdown", "sw_thermal_slowdown"]),
    ).toStrictEqual({
      clockEvents: ["hw-slowdown", "sw-thermal-slowdown"],
    })
    expect(
      reasons("clocks_throttle_reasons", "clocks_throttle_reason", ["hw_power_brake_slowdown", "sw_power_cap"]),
    ).toStrictEqual({
      clockEvents: ["hw-power-brake-slowdown"],
    })
    expect(reasons("clocks_throttle_reasons", "clocks_throttle_reason", [])).toStrictEqual({ clockEvents: [] })
    expect(
      healthOf(
        "<clocks_event_reasons><clocks_event_reason_hw_slowdown>N/A</clocks_event_reason_hw_slowdown></clocks_event_reasons>",
      ),
    ).toBeUndefined()
  })

  it("reads the NVLink fabric, state and summary lower-case with dashes", () => {
    expect(
      healthOf(
        "<fabric><state>In Progress</state><status>Success</status><cliqueId>32766</cliqueId>" +
          "<clusterUuid>889d2be1-4bbf-69e1-d3f2-97c465ee31aa</clusterUuid><health><summary>Limited Capacity</summary>" +
          "<bandwidth>Full</bandwidth></health></fabric>",
      ),
    ).toStrictEqual({
      fabric: {
        state: "in-progress",
        status: "success",
        cliqueId: "32766",
        clusterUuid: "889d2be1-4bbf-69e1-d3f2-97c465ee31aa",
        summary: "limited-capacity",
      },
    })
    expect(healthOf("<fabric><state>N/A</state><status>N/A</status></fabric>")).toBeUndefined()
  })

  it("ignores health elements outside their section and inside elements it does not read", () => {
    expect(
      healthOf(
        "<state>Completed</state><remapped_row_pending>Yes</remapped_row_pending>" +
          "<processes><process_info><fabric><state>Completed</state></fabric></process_info></processes>" +
          "<mig_devices><mig_device><ecc_error_count><volatile_count><sram_uncorrectable>5</sram_uncorrectable></volatile_count></ecc_error_count></mig_device></mig_devices>",
      ),
    ).toBeUndefined()
  })

  it("holds a health value to the value-length limit", () => {
    const error = errorFrom(
      parseXmlReading(documentOf(`<vbios_version>${"9".repeat(outputLimits.maxValueLength + 1)}</vbios_version>`)),
    )
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain("vbios")
  })
})
