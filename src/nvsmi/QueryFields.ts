/**
 * The identity fields of `--query-gpu`, in the order of the CSV columns nvidia-smi prints. A driver that
 * refuses one of them (before 570 the `platform.*` fields do not exist) is read as XML instead.
 */
export const gpuQueryFields = [
  "index",
  "uuid",
  "serial",
  "name",
  "pci.bus_id",
  "mig.mode.current",
  "driver_version",
  "platform.chassis_serial_number",
  "platform.slot_number",
  "platform.tray_index",
  "platform.host_id",
  "platform.peer_type",
  "platform.module_id",
  "platform.gpu_fabric_guid",
] as const

/**
 * A group of health fields asked for together: the first of its spellings whose fields the driver accepts
 * is used, and none when it refuses a field of every spelling. One refused field fails the whole query,
 * so a group is as small as the fields that arrived in the same driver release.
 */
export interface HealthFieldGroup {
  readonly name: string
  readonly spellings: ReadonlyArray<ReadonlyArray<string>>
}

const clockEventReasons = (prefix: string): ReadonlyArray<string> =>
  ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"].map(
    (reason) => `${prefix}.${reason}`,
  )

/** The health fields of `--query-gpu`, after the identity fields, group by group. */
export const healthFieldGroups: ReadonlyArray<HealthFieldGroup> = [
  {
    name: "retired-pages",
    spellings: [["retired_pages.single_bit_ecc.count", "retired_pages.double_bit.count", "retired_pages.pending"]],
  },
  {
    name: "remapped-rows",
    spellings: [
      ["remapped_rows.correctable", "remapped_rows.uncorrectable", "remapped_rows.pending", "remapped_rows.failure"],
    ],
  },
  {
    name: "ecc",
    spellings: [
      [
        "ecc.mode.current",
        "ecc.errors.corrected.volatile.total",
        "ecc.errors.uncorrected.volatile.total",
        "ecc.errors.corrected.aggregate.total",
        "ecc.errors.uncorrected.aggregate.total",
      ],
    ],
  },
  { name: "recovery-action", spellings: [["gpu_recovery_action"]] },
  {
    name: "pcie",
    spellings: [["pcie.link.gen.current", "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max"]],
  },
  {
    name: "clock-events",
    // Drivers before 535 know only the `clocks_throttle_reasons` spelling.
    spellings: [clockEventReasons("clocks_event_reasons"), clockEventReasons("clocks_throttle_reasons")],
  },
  {
    name: "fabric",
    // The health summary came after the fabric state.
    spellings: [
      ["fabric.state", "fabric.status", "fabric.cliqueId", "fabric.clusterUuid", "fabric.health.summary"],
      ["fabric.state", "fabric.status", "fabric.cliqueId", "fabric.clusterUuid"],
    ],
  },
  { name: "vbios", spellings: [["vbios_version"]] },
]

/** The first driver branch whose `--query-gpu` knows `fabric.health.summary` (the 570 GB200 capture has no summary). */
export const fabricSummaryDriverBranch = 580

const refusedBeforeFabricSummary: ReadonlySet<string> = new Set(["fabric.health.summary"])
const nothingRefused: ReadonlySet<string> = new Set()

/**
 * The health fields a node's driver branch (GPU Feature Discovery's `nvidia.com/cuda.driver.major` label)
 * is known to refuse, so that its first reading asks without them; a branch that refuses more is learnt
 * from its first refusal.
 */
export const refusedFieldsForDriverBranch = (branch: number | undefined): ReadonlySet<string> =>
  branch !== undefined && branch < fabricSummaryDriverBranch ? refusedBeforeFabricSummary : nothingRefused

/** Every health field in any spelling. */
export const healthQueryFields: ReadonlySet<string> = new Set(
  healthFieldGroups.flatMap((group) => group.spellings.flat()),
)

/** The spelling of a group the driver has not refused a field of, if any is left. */
const spellingFor = (group: HealthFieldGroup, refused: ReadonlySet<string>): ReadonlyArray<string> | undefined =>
  group.spellings.find((fields) => fields.every((field) => !refused.has(field)))

/** The fields to ask a node for: the identity fields, then each health group the driver has not refused. */
export const queryFieldsFor = (refused: ReadonlySet<string>): ReadonlyArray<string> => [
  ...gpuQueryFields,
  ...healthFieldGroups.flatMap((group) => spellingFor(group, refused) ?? []),
]

/** The health groups left out of the query for a node, by name. */
export const droppedHealthGroups = (refused: ReadonlySet<string>): ReadonlyArray<string> =>
  healthFieldGroups.filter((group) => spellingFor(group, refused) === undefined).map((group) => group.name)
