// A third-party exporter as a package would ship it: it depends on "effect" and on the contract's
// types only, never on the service's code.
import { Effect, Result } from "effect"
import type { ExporterFactory } from "../../../src/pipeline/Exporter.ts"

export interface MemoryConfig {
  readonly label: string
}

const isSection = (section: unknown): section is Readonly<Record<string, unknown>> =>
  typeof section === "object" && section !== null && !Array.isArray(section)

export const factory: ExporterFactory<MemoryConfig> = {
  kind: "exporter",
  type: "memory",
  defaultConfig: { label: "memory" },
  validate: (section) => {
    if (section === undefined || section === null) return Result.succeed({ label: "memory" })
    if (!isSection(section)) return Result.fail([{ key: "", message: "must be a mapping" }])
    const problems = Object.keys(section)
      .filter((key) => key !== "label")
      .map((key) => ({ key, message: "unknown key" }))
    const label = section.label ?? "memory"
    if (typeof label !== "string") problems.push({ key: "label", message: "must be a string" })
    return problems.length > 0 || typeof label !== "string" ? Result.fail(problems) : Result.succeed({ label })
  },
  create: (_config, settings) =>
    Effect.sync(() => {
      let sent = 0
      return {
        id: settings.id,
        export: (events) =>
          Effect.sync(() => {
            sent += events.length
          }),
        flush: () => Effect.void,
        health: Effect.succeed({ healthy: true }),
        stats: Effect.sync(() => ({ sent, failed: 0, retried: 0, dropped: 0, queued: 0 })),
      }
    }),
}
