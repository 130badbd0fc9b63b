import type { Writable } from "node:stream"
import { Effect, Schema } from "effect"
import { sectionDefaults, sectionValidator } from "../../component/ConfigSection.ts"
import type { ExporterFactory } from "../../component/Exporter.ts"
import { batchFitsQueue, type QueueSettings, queueSettingsFields } from "../../config/QueueSettings.ts"
import * as QueuedExporter from "../QueuedExporter.ts"
import * as StdoutSink from "./StdoutSink.ts"

/** The `stdout` section: only the common queue and retry settings. */
export type StdoutConfig = QueueSettings

const StdoutSection = Schema.Struct(queueSettingsFields).check(batchFitsQueue)

export interface StdoutExporterOptions {
  /** Where the records go; `process.stdout` unless given (tests pass their own stream). */
  readonly stream?: Writable
}

/**
 * The `stdout` exporter factory: one JSON record per line on stdout, through a bounded, retried
 * queue like every exporter. The service's own logs go to stderr, never here.
 */
export const makeFactory = (options: StdoutExporterOptions = {}): ExporterFactory<StdoutConfig> => ({
  kind: "exporter",
  type: "stdout",
  defaultConfig: sectionDefaults(StdoutSection),
  validate: sectionValidator(StdoutSection),
  create: (config, settings) =>
    Effect.gen(function* () {
      const sink = yield* StdoutSink.make(options.stream ?? process.stdout)
      return yield* QueuedExporter.make({ id: settings.id, sink, settings: config })
    }),
})

export const factory: ExporterFactory<StdoutConfig> = makeFactory()
