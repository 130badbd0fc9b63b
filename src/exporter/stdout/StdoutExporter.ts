import type { Writable } from "node:stream"
import * as Effect from "effect/Effect"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import type { ExporterFactory } from "../../pipeline/Exporter.ts"
import * as QueuedExporter from "../exporterhelper/QueuedExporter.ts"
import { type StdoutConfig, stdoutSettings } from "./StdoutConfig.ts"
import * as StdoutSink from "./StdoutSink.ts"

export interface StdoutExporterOptions {
  /** Where the records go; `process.stdout` unless given (tests pass their own stream). */
  readonly stream?: Writable
}

/**
 * The `stdout` exporter factory: one JSON record per line on stdout, through a bounded, retried
 * queue like every exporter. The service's own logs go to stderr, never here.
 */
export const makeFactory = (
  options: StdoutExporterOptions = {},
): ExporterFactory<StdoutConfig> & Configured<StdoutConfig> => ({
  kind: "exporter",
  type: "stdout",
  ...configuredBy(stdoutSettings),
  create: (config, settings) =>
    Effect.gen(function* () {
      const sink = yield* StdoutSink.make(options.stream ?? process.stdout)
      return yield* QueuedExporter.make({ id: settings.id, sink, settings: config })
    }),
})

export const factory = makeFactory()
