import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { notNegative, SECOND, WEEK } from "../../config/SettingRules.ts"
import { durationType, intType, stringType } from "../../config/SettingType.ts"
import { defaultHealthThresholds, type HealthThresholds } from "../../domain/HealthVerdict.ts"

/** The `inventory` processor's config (section `processors.inventory`). */
export interface InventoryConfig {
  /** How often unchanged GPUs are re-affirmed as `observed`; 0: never. */
  readonly reportIntervalMs: number
  /** How long a gone node, pod or GPU is kept before its GPUs are removed. */
  readonly removalGraceMs: number
  /**
   * Where the current location of every GPU is kept across restarts: `memory` (this process only),
   * `node-labels` (the node labels the receiver writes), or the id of an exporter of the pipeline that
   * keeps a store (`nats`: that exporter's KV bucket).
   */
  readonly store: string
  /** The limits of the health verdict. */
  readonly health: HealthThresholds
}

export const reportIntervalSetting: Setting<number> = {
  key: "reportInterval",
  env: "REPORT_INTERVAL",
  flag: "--report-interval",
  type: durationType,
  default: 3_600_000,
  secret: "none",
  label: "report interval",
  bounds: { min: SECOND, max: WEEK, zeroDisables: true },
  description: "How often an unchanged GPU is re-affirmed with an observed event; 0 disables it.",
  check: notNegative("report interval must be >= 0 (0 disables periodic reports)"),
}

export const removalGraceSetting: Setting<number> = {
  key: "removalGrace",
  env: "REMOVAL_GRACE",
  flag: "--removal-grace",
  type: durationType,
  default: 300_000,
  secret: "none",
  label: "removal grace",
  bounds: { min: 0, max: WEEK },
  description:
    "How long a node, pod or GPU may be gone before its GPUs are removed; a restarted device-plugin pod within it changes nothing.",
  check: notNegative("removal grace must be >= 0"),
}

/** The store named when none is configured. */
export const memoryStoreName = "memory"

/** A store name (`memory`, `node-labels`) or an exporter id (`nats`, `nats/archive`). */
const STORE_NAME = /^[a-z][a-z0-9_-]*(\/[A-Za-z0-9_-]+)?$/

export const storeSetting: Setting<string> = {
  key: "store",
  env: "INVENTORY_STORE",
  flag: "--inventory-store",
  type: stringType,
  default: memoryStoreName,
  secret: "none",
  label: "inventory store",
  description:
    "Where GPU locations survive a restart: memory, node-labels (the node labels written, needs LABELS_ENABLED), or the id of a pipeline exporter that keeps a store (nats: its KV bucket; postgres: its current-state table).",
  check: (value) =>
    STORE_NAME.test(value)
      ? undefined
      : "inventory store must be memory, node-labels or the id of an exporter of the pipeline",
}

export const retiredPagesLimitSetting: Setting<number> = {
  key: "healthRetiredPagesLimit",
  env: "HEALTH_RETIRED_PAGES_LIMIT",
  flag: "--health-retired-pages-limit",
  type: intType,
  default: defaultHealthThresholds.retiredPagesLimit,
  secret: "none",
  label: "health retired pages limit",
  bounds: { min: 1, max: 4096 },
  description:
    "Retired pages (single-bit plus double-bit) at which a GPU is failed and RMA-eligible (retired-pages-limit); DCGM's limit is 63.",
}

export const remappedRowsLimitSetting: Setting<number> = {
  key: "healthRemappedRowsLimit",
  env: "HEALTH_REMAPPED_ROWS_LIMIT",
  flag: "--health-remapped-rows-limit",
  type: intType,
  default: defaultHealthThresholds.remappedRowsLimit,
  secret: "none",
  label: "health remapped rows limit",
  bounds: { min: 1, max: 65_536 },
  description:
    "Rows remapped for uncorrectable errors at which a GPU is failed and RMA-eligible (remapped-rows-limit); DCGM's limit is 512.",
}

export const volatileUncorrectableLimitSetting: Setting<number> = {
  key: "healthVolatileUncorrectableLimit",
  env: "HEALTH_VOLATILE_UNCORRECTABLE_LIMIT",
  flag: "--health-volatile-uncorrectable-limit",
  type: intType,
  default: defaultHealthThresholds.volatileUncorrectableLimit,
  secret: "none",
  label: "health volatile uncorrectable limit",
  bounds: { min: 0, max: 1_000_000 },
  description:
    "Volatile uncorrectable ECC errors (since the driver loaded) above which a GPU is degraded (ecc-volatile-uncorrectable); 0: any.",
}

/** The processor's settings, in the order of the configuration reference. */
export const inventorySettings: ComponentSettings<InventoryConfig> = {
  settings: [
    reportIntervalSetting,
    removalGraceSetting,
    storeSetting,
    retiredPagesLimitSetting,
    remappedRowsLimitSetting,
    volatileUncorrectableLimitSetting,
  ],
  build: (values) => ({
    reportIntervalMs: values.require(reportIntervalSetting),
    removalGraceMs: values.require(removalGraceSetting),
    store: values.require(storeSetting),
    health: {
      retiredPagesLimit: values.require(retiredPagesLimitSetting),
      remappedRowsLimit: values.require(remappedRowsLimitSetting),
      volatileUncorrectableLimit: values.require(volatileUncorrectableLimitSetting),
    },
  }),
}
