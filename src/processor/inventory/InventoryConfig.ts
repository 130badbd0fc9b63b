import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { notNegative, SECOND, WEEK } from "../../config/SettingRules.ts"
import { durationType, stringType } from "../../config/SettingType.ts"

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

/** The processor's settings, in the order of the configuration reference. */
export const inventorySettings: ComponentSettings<InventoryConfig> = {
  settings: [reportIntervalSetting, removalGraceSetting, storeSetting],
  build: (values) => ({
    reportIntervalMs: values.require(reportIntervalSetting),
    removalGraceMs: values.require(removalGraceSetting),
    store: values.require(storeSetting),
  }),
}
