import * as Effect from "effect/Effect"
import type { Exporter, ExporterStats } from "../../../pipeline/Exporter.ts"
import type { ConfiguredExporter } from "../../../service/ComponentRegistry.ts"

/** The exporters of the demo's pipeline, kept as they are created, to tell what each did once the service ended. */
export interface CountedExporters {
  readonly exporters: ReadonlyArray<ConfiguredExporter>
  /** Each exporter's counters now, by id, in the pipeline's order (none for one that never started). */
  readonly stats: Effect.Effect<ReadonlyArray<ExporterOutcome>>
}

interface ExporterOutcome {
  readonly id: string
  readonly stats: ExporterStats | undefined
}

export const countedExporters = (configured: ReadonlyArray<ConfiguredExporter>): CountedExporters => {
  const created = new Map<string, Exporter>()
  return {
    exporters: configured.map((exporter) => ({
      ...exporter,
      create: (settings) =>
        exporter.create(settings).pipe(Effect.tap((running) => Effect.sync(() => created.set(exporter.id, running)))),
    })),
    stats: Effect.forEach(configured, (exporter): Effect.Effect<ExporterOutcome> => {
      const running = created.get(exporter.id)
      return running === undefined
        ? Effect.succeed({ id: exporter.id, stats: undefined })
        : Effect.map(running.stats, (stats) => ({ id: exporter.id, stats }))
    }),
  }
}

/** Whether an exporter had records to write and wrote none: its sink was never reached. */
export const neverWrote = (stats: ExporterStats | undefined): boolean =>
  stats === undefined || (stats.sent === 0 && stats.dropped + stats.queued + stats.failed > 0)

/** The summary's lines about the exporters: what each sent and dropped, and the ones that never wrote. */
export const exporterLines = (all: ReadonlyArray<ExporterOutcome>): ReadonlyArray<string> => [
  "  exporters:",
  ...all.map(({ id, stats }) =>
    stats === undefined
      ? `    ${id}: did not start`
      : `    ${id}: ${stats.sent} sent, ${stats.dropped} dropped${neverWrote(stats) ? ", never wrote (its sink was not reached)" : ""}`,
  ),
]
