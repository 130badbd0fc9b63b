import { describe, expect, it } from "vitest"
import { settingFlagsHelp as runSettingFlagsHelp } from "../../src/cli/commands/run/RunUsage.ts"
import { serviceFlags as serviceFlagsOf } from "../../src/cli/ServiceFlags.ts"
import { HELP_WIDTH, settingFlagsHelp } from "../../src/cli/SettingFlagsHelp.ts"
import { settingReference } from "../../src/config/SettingsReference.ts"
import { enumType } from "../../src/config/SettingType.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { gpuSerials } from "./GpuSerialsCli.ts"

const serviceFlags = serviceFlagsOf(builtinComponents)

const help = settingFlagsHelp(serviceFlags)
const lines = help.split("\n")

/** The lines of one flag's entry: its first line and the indented lines after it. */
const entryOf = (usage: string): string => {
  const start = lines.findIndex((line) => line.startsWith(`  ${usage} `) || line === `  ${usage}`)
  if (start === -1) throw new Error(`no entry for ${usage}`)
  const end = lines.findIndex((line, index) => index > start && line.startsWith("  --"))
  return lines
    .slice(start, end === -1 ? undefined : end)
    .map((line) => line.trim())
    .join(" ")
    .replace(/\s+/g, " ")
}

describe("the help of the setting flags", () => {
  it("shows each flag with its value, description, variable, default and range", () => {
    expect(entryOf("--workers N")).toBe(
      "--workers N Pods read at the same time. env WORKERS, default 16, range 1..1024",
    )
    expect(entryOf("--nvidia-smi-max-output SIZE")).toContain("env NVIDIA_SMI_MAX_OUTPUT, default 8Mi, range 1Ki..64Mi")
    expect(entryOf("--report-interval DURATION")).toContain("env REPORT_INTERVAL, default 1h, range 0 or 1s..168h")
    expect(entryOf("--log-level debug|info|warn|error")).toContain("env LOG_LEVEL, default info")
    const sslmode = settingFlagsHelp([
      {
        flag: "--sslmode",
        takesValue: true,
        description: "TLS mode.",
        setting: {
          key: "sslmode",
          env: "SSLMODE",
          flag: "--sslmode",
          type: enumType(["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]),
          default: "require",
          secret: "none",
          label: "sslmode",
          description: "TLS mode.",
        },
      },
    ])
    expect(sslmode).toContain("--sslmode VALUE")
    expect(sslmode).toContain("default require, one of")
    expect(sslmode).toContain("disable|allow|prefer|require|verify-ca|verify-full")
  })

  it("shows a switch once, as taking no value", () => {
    expect(entryOf("--[no-]labels")).toContain("env LABELS_ENABLED, default true")
    expect(help).not.toMatch(/--labels [A-Z]/)
    expect(help).not.toContain("  --no-labels")
  })

  it("lists every setting flag with the variable and default of the configuration reference", () => {
    for (const spec of serviceFlags) {
      if (spec.setting === undefined || spec.impliedValue !== undefined) continue
      const reference = settingReference(spec.setting)
      const name = spec.setting.type.name === "bool" ? `--[no-]${spec.flag.slice(2)}` : `${spec.flag} `
      const entry = lines.findIndex((line) => line.startsWith(`  ${name}`))
      expect(entry, spec.flag).toBeGreaterThan(-1)
      const text = entryOf(lines[entry]?.trim().split(/\s{2,}/)[0] ?? "")
      if (reference.env !== undefined) expect(text, spec.flag).toContain(`env ${reference.env}`)
      if (reference.default !== undefined && reference.default !== "") {
        expect(text, spec.flag).toContain(`default ${reference.default}`)
      }
      if (reference.range !== undefined) expect(text, spec.flag).toContain(`range ${reference.range}`)
    }
  })

  it("fits in 100 columns", () => {
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH)
  })

  it.each(["run", "demo"])("is what %s --help shows, in 100 columns", (command) => {
    const run = gpuSerials([command, "--help"])
    expect(run.status).toBe(0)
    expect(run.stdout).toContain(runSettingFlagsHelp)
    for (const line of run.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH)
  })
})
