import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { type ComponentSettings, configuredBy, decodeSection } from "../../src/config/ComponentSettings.ts"
import type { Setting } from "../../src/config/Setting.ts"
import { intType, stringType } from "../../src/config/SettingType.ts"
import { resolve } from "./ResolveFixture.ts"

const sizeSetting: Setting<number> = {
  key: "limits.size",
  env: "EXAMPLE_SIZE",
  type: intType,
  default: 8,
  secret: "none",
  label: "size",
  description: "A size for the example.",
  bounds: { min: 1, max: 64 },
}

const nameSetting: Setting<string> = {
  key: "name",
  type: stringType,
  secret: "none",
  label: "name",
  description: "An optional name for the example.",
}

const example: ComponentSettings<{ readonly size: number; readonly name?: string }> = {
  settings: [sizeSetting, nameSetting],
  rules: [
    (values) =>
      values.get(nameSetting) === "big" && (values.get(sizeSetting) ?? 0) < 32
        ? [{ setting: sizeSetting, message: "size must be at least 32 for the big one" }]
        : [],
  ],
  build: (values) => {
    const name = values.get(nameSetting)
    return { size: values.require(sizeSetting), ...(name === undefined ? {} : { name }) }
  },
}

describe("a component's settings", () => {
  it("give its factory the defaults and a validate of its section", () => {
    const parts = configuredBy(example)
    expect(parts.settings).toBe(example)
    expect(parts.defaultConfig).toEqual({ size: 8 })
    expect(parts.validate(undefined)).toEqual(Result.succeed({ size: 8 }))
    expect(parts.validate(null)).toEqual(Result.succeed({ size: 8 }))
    expect(parts.validate({ limits: { size: 16 }, name: "small" })).toEqual(Result.succeed({ size: 16, name: "small" }))
  })

  it("check a section on its own: every problem at once, keys relative to the section, environment ignored", () => {
    const outcome = decodeSection(example, { limits: { size: 100, colour: "red" }, extra: 1 })
    expect(Result.isFailure(outcome) ? outcome.failure : []).toEqual([
      { key: "limits.colour", message: "unknown key" },
      { key: "extra", message: "unknown key" },
      { key: "limits.size", message: "size must be between 1 and 64, got 100" },
    ])
    expect(decodeSection(example, "big")).toEqual(Result.fail([{ key: "", message: "must be a mapping" }]))
    expect(decodeSection(example, { limits: 3 })).toEqual(
      Result.fail([{ key: "limits", message: "must be a mapping" }]),
    )
  })

  it("apply their rules across settings, pinned to one setting", () => {
    expect(decodeSection(example, { name: "big" })).toEqual(
      Result.fail([{ key: "limits.size", message: "size must be at least 32 for the big one" }]),
    )
  })

  it("build the default config without the rules across settings, which validate applies", () => {
    const required = {
      ...example,
      rules: [...(example.rules ?? []), () => [{ setting: nameSetting, message: "name is required" }]],
    }
    expect(configuredBy(required).defaultConfig).toEqual({ size: 8 })
    expect(configuredBy(required).validate({})).toEqual(Result.fail([{ key: "name", message: "name is required" }]))
  })

  it("refuse defaults that break their own setting's rule or range when the factory is made", () => {
    expect(() => configuredBy({ ...example, settings: [{ ...sizeSetting, default: 0 }, nameSetting] })).toThrow(
      /size must be between 1 and 64/,
    )
  })
})

describe("a program's config object under the config file", () => {
  const base = { cluster: { name: "lab" }, processors: { inventory: { removalGrace: "10s" } } }

  it("gives values the file, the environment and the flags may override", () => {
    const resolved = resolve({ base })
    if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
    expect(resolved.success.config.clusterName).toBe("lab")
    expect(resolved.success.config.processors[0]?.config).toMatchObject({ removalGraceMs: 10_000 })

    const overridden = resolve({
      base,
      file: "processors: { inventory: { removalGrace: 30s } }",
      env: { CLUSTER_NAME: "prod" },
    })
    if (Result.isFailure(overridden)) throw new Error(overridden.failure.format())
    expect(overridden.success.config.clusterName).toBe("prod")
    expect(overridden.success.config.processors[0]?.config).toMatchObject({ removalGraceMs: 30_000 })
  })

  it("is checked like a config file", () => {
    const resolved = resolve({ base: { cluster: { name: "lab" }, receivers: { kube_exec: { workerz: 3 } } } })
    expect(Result.isFailure(resolved) ? resolved.failure.problems : []).toEqual([
      { key: "receivers.kube_exec.workerz", message: 'unknown key (did you mean "workers"?)' },
    ])
  })
})
