import { ExportResultCode } from "@opentelemetry/core"
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics"
import * as Effect from "effect/Effect"

/** The SDK's message, with the HTTP status its exporter error carries (`code`) when there is one. */
const reasonOf = (error: Error | undefined): string => {
  if (error === undefined) return "unknown"
  const status = "code" in error && typeof error.code === "number" ? ` (HTTP ${error.code})` : ""
  return `${error.message}${status}`
}

/**
 * The SDK reports a failed metrics push only to its own diagnostic logger, which the service leaves off:
 * this wrapper says it in the service's log instead, once when pushes start failing (with the reason)
 * and once when they work again, never once per interval.
 */
export const watchPushes = Effect.fnUntraced(function* (exporter: PushMetricExporter) {
  const context = yield* Effect.context<never>()
  // A push still out when the exporter closed (a collector that never answers) ends after the shutdown
  // line: it is no news by then.
  let closed = false
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
    }),
  )
  const log = (effect: Effect.Effect<void>): void => {
    if (!closed) Effect.runForkWith(context)(effect)
  }
  let failing = false

  const watched: PushMetricExporter = {
    export: (metrics, resultCallback) =>
      exporter.export(metrics, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          if (failing) log(Effect.logInfo("OTLP metrics push works again"))
          failing = false
        } else if (!failing) {
          failing = true
          log(
            Effect.logWarning("OTLP metrics push failed; retried at the next interval").pipe(
              Effect.annotateLogs({ reason: reasonOf(result.error) }),
            ),
          )
        }
        resultCallback(result)
      }),
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
  }
  if (exporter.selectAggregationTemporality !== undefined) {
    watched.selectAggregationTemporality = exporter.selectAggregationTemporality.bind(exporter)
  }
  if (exporter.selectAggregation !== undefined) {
    watched.selectAggregation = exporter.selectAggregation.bind(exporter)
  }
  return watched
})
