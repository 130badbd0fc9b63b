import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { MINUTE, positive, SECOND, WEEK, YEAR } from "../../config/SettingRules.ts"
import { durationType } from "../../config/SettingType.ts"

/** The `fleet` processor's config (section `processors.fleet`): a hub's view of every cluster. */
export interface FleetConfig {
  /** How long after a removal in one cluster an appearance in another is still that GPU's move. */
  readonly crossClusterWindowMs: number
  /** How long a cluster may go unheard of (no heartbeat, no record) before it is stale. */
  readonly staleAfterMs: number
}

export const crossClusterWindowSetting: Setting<number> = {
  key: "crossClusterWindow",
  env: "CROSS_CLUSTER_WINDOW",
  flag: "--cross-cluster-window",
  type: durationType,
  default: 30 * 24 * 3_600_000,
  secret: "none",
  label: "cross-cluster window",
  bounds: { min: MINUTE, max: YEAR },
  description:
    "How long after a GPU's removal in one cluster its appearance in another is one moved; a removal is forwarded once this has passed with no sign of the GPU.",
  check: positive("cross-cluster window must be > 0"),
}

export const staleAfterSetting: Setting<number> = {
  key: "staleAfter",
  env: "STALE_AFTER",
  flag: "--stale-after",
  type: durationType,
  default: 5 * MINUTE,
  secret: "none",
  label: "stale after",
  bounds: { min: 10 * SECOND, max: WEEK },
  description:
    "How long a cluster may go unheard of (no heartbeat, no record) before the hub names it stale in /readyz and gpu_serials_hub_cluster_stale.",
  check: positive("stale after must be > 0"),
}

export const fleetSettings: ComponentSettings<FleetConfig> = {
  settings: [crossClusterWindowSetting, staleAfterSetting],
  build: (values) => ({
    crossClusterWindowMs: values.require(crossClusterWindowSetting),
    staleAfterMs: values.require(staleAfterSetting),
  }),
}
