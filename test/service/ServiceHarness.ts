import type { SimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Exit, Fiber, Result } from "effect"
import { parseServiceFlags } from "../../src/cli/ServiceFlags.ts"
import { resolveConfig } from "../../src/config/ResolveConfig.ts"
import type { ServiceConfig } from "../../src/config/ServiceConfig.ts"
import type { InventoryEvent } from "../../src/domain/InventoryEvent.ts"
import * as QueuedExporter from "../../src/exporter/exporterhelper/QueuedExporter.ts"
import { defaultQueueSettings } from "../../src/exporter/exporterhelper/QueueSettings.ts"
import * as JsonLogger from "../../src/log/JsonLogger.ts"
import { makeFactory as makeKubeExecFactory } from "../../src/receiver/kube/KubeExecFactory.ts"
import type { KubeExecTuning } from "../../src/receiver/kube/KubeExecReceiver.ts"
import { defaultTuning } from "../../src/receiver/kube/KubeExecReceiver.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { ComponentRegistry, type ConfiguredExporter } from "../../src/service/ComponentRegistry.ts"
import { runGpuSerialsService } from "../../src/service/GpuSerialsService.ts"

/** An exporter that keeps every event it is handed, in order. */
export const capturingExporter = (events: Array<InventoryEvent>): ConfiguredExporter => ({
  id: "capture",
  type: "capture",
  config: {},
  create: () =>
    QueuedExporter.make({
      id: "capture",
      settings: defaultQueueSettings,
      sink: { write: (batch) => Effect.sync(() => events.push(...batch)) },
    }),
})

/** The service's config for `cluster` as flags give it: node labels off unless `labels`, then `overrides`. */
export const serviceConfig = (
  cluster: SimulatedCluster,
  overrides: ReadonlyArray<string> = [],
  options: { readonly labels?: boolean } = {},
): ServiceConfig => {
  const labels = options.labels === true ? [] : ["--no-labels"]
  const resolved = resolveConfig({
    flags: parseServiceFlags([
      "--cluster-name",
      "e2e",
      "--kubeconfig",
      cluster.kubeconfigPath,
      ...labels,
      ...overrides,
    ]),
    env: {},
    catalog: builtinComponents,
  })
  if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
  return { ...resolved.success, telemetry: { ...resolved.success.telemetry, serverPort: 0 } }
}

export interface RunningService {
  /** Why the service stopped on its own, if it did: a test waiting on it fails at once with this. */
  readonly ended: () => string | undefined
  readonly events: Array<InventoryEvent>
  readonly port: () => number
  readonly logs: Array<Record<string, unknown>>
  readonly stop: () => Promise<Exit.Exit<void, unknown>>
}

/** Starts the real service in this process against `cluster`, with a capturing exporter. */
export const startService = async (
  config: ServiceConfig,
  tuning: Partial<KubeExecTuning> = {},
): Promise<RunningService> => {
  const events: Array<InventoryEvent> = []
  const logs: Array<Record<string, unknown>> = []
  const fiber = Effect.runFork(
    runGpuSerialsService({
      config,
      exporters: [capturingExporter(events)],
      serviceVersion: "0.0.0-test",
      registry: ComponentRegistry.make({
        ...builtinComponents,
        receivers: [makeKubeExecFactory({ ...defaultTuning, ...tuning })],
      }),
    }).pipe(
      Effect.provide(
        JsonLogger.layer({
          level: "debug",
          output: { write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) },
        }),
      ),
    ),
  )
  let ended: string | undefined
  fiber.addObserver((exit) => {
    ended = Exit.isSuccess(exit) ? "the service returned" : `the service failed: ${String(exit.cause)}`
  })
  return {
    ended: () => ended,
    events,
    logs,
    // The port the health server bound, as the service's start line names it.
    port: () => Number(logs.find((line) => line.msg === "gpu-serials running")?.port ?? 0),
    stop: () => Effect.runPromise(Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))),
  }
}

/** Polls `condition` every 50 ms until it holds, failing with `what` after `timeoutMs` or when `service` ended. */
export const eventually = async (
  service: RunningService,
  what: string,
  condition: () => boolean,
  timeoutMs = 20_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    const ended = service.ended()
    if (ended !== undefined) throw new Error(`${ended} before ${what}`)
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export const eventsOf = (events: ReadonlyArray<InventoryEvent>, kind: string) =>
  events.filter((event) => event.record.event === kind)
