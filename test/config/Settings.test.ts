import { describe, expect, it } from "vitest"
import { pathIn, settingsSections } from "../../src/config/ComponentCatalog.ts"
import { valueProblem } from "../../src/config/Setting.ts"
import { MAX_TIMER_MILLIS } from "../../src/config/SettingBounds.ts"
import { durationType, millisType } from "../../src/config/SettingType.ts"
import { natsStreamMaxAgeSetting } from "../../src/exporter/nats/NatsConfig.ts"
import { crossClusterWindowSetting } from "../../src/processor/fleet/FleetConfig.ts"
import { allSettings, builtinComponents, settingPath } from "./BuiltinSettings.ts"

describe("the settings table", () => {
  it("gives every setting a unique path, variable and flag", () => {
    const paths = settingsSections(builtinComponents).flatMap((section) =>
      section.settings.map((setting) => pathIn(section, setting)),
    )
    const distinct = [...new Set(allSettings)]
    const envs = distinct.flatMap((setting) => (setting.env === undefined ? [] : [setting.env]))
    const flags = distinct.flatMap((setting) => (setting.flag === undefined ? [] : [setting.flag]))
    expect(new Set(paths).size).toBe(paths.length)
    expect(new Set(envs).size).toBe(envs.length)
    expect(new Set(flags).size).toBe(flags.length)
    for (const env of envs) expect(env).toMatch(/^[A-Z][A-Z0-9_]*$/)
    for (const flag of flags) expect(flag).toMatch(/^--[a-z][a-z0-9-]*$/)
  })

  it("describes every setting in one line", () => {
    for (const setting of allSettings) {
      expect(setting.description.length).toBeGreaterThan(10)
      expect(setting.description).not.toContain("\n")
    }
  })

  it("keeps secrets off the command line, where every user of the machine can read them", () => {
    for (const setting of allSettings) if (setting.secret === "value") expect(setting.flag).toBeUndefined()
  })

  it("keeps the Go original's variables and defaults", () => {
    const byEnv = new Map(allSettings.map((setting) => [setting.env, setting]))
    const defaults: ReadonlyArray<readonly [string, unknown]> = [
      ["EXPORTER_TYPE", ["stdout"]],
      ["CLUSTER_NAME", ""],
      ["NAMESPACE", "gpu-operator"],
      ["LABEL_SELECTOR", "app=nvidia-device-plugin-daemonset"],
      ["CONTAINER", "nvidia-device-plugin"],
      ["WORKERS", 16],
      ["TIMEOUT", 30_000],
      ["RESYNC", 0],
      ["QPS", 50],
      ["BURST", 100],
      ["KUBECONFIG", ""],
      ["LOG_LEVEL", "info"],
      ["SERVER_PORT", 8080],
      ["LEADER_ELECTION", false],
      ["LEASE_NAMESPACE", "gpuid"],
      ["LEASE_NAME", "gpuid-leader"],
      ["LEASE_DURATION", 15_000],
      ["LEASE_RENEW_DEADLINE", 10_000],
      ["LEASE_RETRY_PERIOD", 2_000],
    ]
    for (const [env, value] of defaults) expect(byEnv.get(env)?.default, env).toEqual(value)
    expect(byEnv.has("POD_NAME")).toBe(true)
  })
})

describe("the bounds of the settings table", () => {
  const numeric = allSettings.filter((setting) => typeof setting.default === "number")

  it("give every numeric setting a range that holds its default", () => {
    expect(numeric.length).toBeGreaterThan(20)
    for (const setting of numeric) {
      const path = settingPath(setting)
      expect(setting.bounds, path).toBeDefined()
      expect(valueProblem(setting, setting.default), path).toBeUndefined()
    }
  })

  it("keep every delay within what a timer can hold", () => {
    // The stream's max age is kept by the NATS server, and the hub's cross-cluster window is compared with
    // records' times (a held removal goes out with the hub's next observation): neither is a timer here.
    const untimed: ReadonlyArray<unknown> = [natsStreamMaxAgeSetting, crossClusterWindowSetting]
    const delays = numeric.filter(
      (setting) => (setting.type === durationType || setting.type === millisType) && !untimed.includes(setting),
    )
    expect(delays.length).toBeGreaterThan(10)
    for (const setting of delays)
      expect(setting.bounds?.max, settingPath(setting)).toBeLessThanOrEqual(MAX_TIMER_MILLIS)
  })

  it("refuse a value just past either end, naming the range", () => {
    for (const setting of numeric) {
      const bounds = setting.bounds
      if (bounds === undefined) continue
      expect(valueProblem(setting, bounds.max), settingPath(setting)).toBeUndefined()
      expect(valueProblem(setting, bounds.max * 2 + 1), settingPath(setting)).toMatch(/between .+ and /)
      expect(valueProblem(setting, bounds.min / 2 - 1), settingPath(setting)).toBeDefined()
    }
  })
})
