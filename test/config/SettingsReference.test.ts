import { describe, expect, it } from "vitest"
import { settingsReference, settingsReferenceMarkdown } from "../../src/config/SettingsReference.ts"
import { allSettings, builtinComponents } from "./BuiltinSettings.ts"

describe("the configuration reference", () => {
  it("lists every setting with its default as the config file writes it", () => {
    const rows = settingsReference(builtinComponents)
    expect(rows).toHaveLength(allSettings.length)
    const byEnv = new Map(rows.map((row) => [row.env, row]))
    expect(byEnv.get("TIMEOUT")).toMatchObject({
      path: "receivers.kube_exec.timeout",
      flag: "--timeout",
      default: "30s",
    })
    expect(byEnv.get("RESYNC")?.default).toBe("0s")
    expect(byEnv.get("NVIDIA_SMI_MAX_OUTPUT")?.default).toBe("8Mi")
    expect(byEnv.get("EXPORTER_TYPE")).toMatchObject({ path: "service.pipelines.gpus.exporters", default: "stdout" })
    expect(byEnv.get("NATS_URL")).toMatchObject({ path: "exporters.nats.url", secret: true })
    expect(byEnv.get("NATS_STREAM")?.default).toBeUndefined()
    expect(byEnv.get("LOG_LEVEL")?.type).toBe("debug|info|warn|error")
  })

  it("renders a Markdown table with one row per setting", () => {
    const markdown = settingsReferenceMarkdown(builtinComponents)
    const lines = markdown.split("\n")
    expect(lines).toHaveLength(allSettings.length + 2)
    expect(markdown).toContain("| `WORKERS` | `--workers` | `receivers.kube_exec.workers` | `int` | `16` |")
    expect(markdown).toContain("`debug\\|info\\|warn\\|error`")
  })
})
