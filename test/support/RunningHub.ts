import { Effect, Exit, Fiber, Result } from "effect"
import { parseServiceFlags } from "../../src/cli/ServiceFlags.ts"
import { resolveConfig } from "../../src/config/ResolveConfig.ts"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"
import * as JsonLogger from "../../src/log/JsonLogger.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import type { ConfiguredExporter } from "../../src/service/ComponentRegistry.ts"
import { runGpuSerialsService } from "../../src/service/GpuSerialsService.ts"
import { capturingExporter } from "../service/ServiceHarness.ts"

/** A hub service running in this process: the events it exported, its log lines, and how it ended. */
export interface RunningHub {
  readonly events: Array<InventoryEvent>
  readonly logs: Array<Record<string, unknown>>
  readonly ended: () => string | undefined
  readonly port: () => number
  readonly stop: () => Promise<void>
}

/**
 * Starts the service with `config` (a hub pipeline), capturing its JSON log and the events it exported;
 * `exporter` replaces the capturing one, given the array to keep its events in.
 */
export const startHub = (
  config: ServiceConfig,
  exporter: (events: Array<InventoryEvent>) => ConfiguredExporter = capturingExporter,
): RunningHub => {
  const events: Array<InventoryEvent> = []
  const logs: Array<Record<string, unknown>> = []
  const fiber = Effect.runFork(
    runGpuSerialsService({ config, exporters: [exporter(events)], serviceVersion: "0.0.0-test" }).pipe(
      Effect.provide(
        JsonLogger.layer({
          level: "info",
          output: { write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) },
        }),
      ),
    ),
  )
  let ended: string | undefined
  fiber.addObserver((exit) => {
    ended = Exit.isSuccess(exit) ? "the hub returned" : `the hub failed: ${String(exit.cause)}`
  })
  return {
    events,
    logs,
    ended: () => ended,
    port: () => Number(logs.find((line) => line.msg === "gpu-serials running")?.port ?? 0),
    stop: async () => {
      await Effect.runPromise(Fiber.interrupt(fiber))
    },
  }
}

/** What differs between the hub configs of the tests. */
export interface HubConfigOptions {
  /** The hub's NATS. */
  readonly url: string
  readonly clusters: ReadonlyArray<string>
  readonly batchSize?: number
  /** `processors.fleet.staleAfter`; 10m unless given. */
  readonly staleAfter?: string
  /** `service.shutdownTimeout`, when given. */
  readonly shutdownTimeout?: string
}

/**
 * A hub's config as a user writes it (receiver `nats`, processor `fleet`, exporter `stdout`, cluster name
 * `fleet`), resolved as the service resolves its file, its health server on a free port.
 */
export const hubServiceConfig = (options: HubConfigOptions): ServiceConfig => {
  const pipelines = "{ gpus: { receivers: [nats], processors: [fleet], exporters: [stdout] } }"
  const resolved = resolveConfig({
    flags: parseServiceFlags([]),
    env: {},
    file: {
      path: "hub.yaml",
      text: [
        "cluster: { name: fleet }",
        "receivers:",
        `  nats: { url: "${options.url}", clusters: [${options.clusters.join(", ")}], batchSize: ${options.batchSize ?? 50} }`,
        "processors:",
        `  fleet: { staleAfter: ${options.staleAfter ?? "10m"} }`,
        "exporters: { stdout: }",
        options.shutdownTimeout === undefined
          ? `service: { pipelines: ${pipelines} }`
          : `service: { shutdownTimeout: ${options.shutdownTimeout}, pipelines: ${pipelines} }`,
        "",
      ].join("\n"),
    },
    catalog: builtinComponents,
  })
  if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
  return { ...resolved.success, telemetry: { ...resolved.success.telemetry, serverPort: 0 } }
}
