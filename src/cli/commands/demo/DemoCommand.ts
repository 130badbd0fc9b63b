import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import { valueAt } from "../../../config/ResolveSettings.ts"
import { freePort } from "../../../health/FreePort.ts"
import { removalGraceSetting } from "../../../processor/inventory/InventoryConfig.ts"
import type { KubeExecConfig } from "../../../receiver/kube/KubeExecConfig.ts"
import { builtinComponents } from "../../../service/BuiltinComponents.ts"
import { ComponentRegistry } from "../../../service/ComponentRegistry.ts"
import type { LoadedServiceConfig } from "../../../service/PipelineConfig.ts"
import { CliIo } from "../../CliIo.ts"
import { type CommandLineSpec, parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { loadServiceConfig } from "../../ServiceConfigLoader.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"
import { reportInvalidConfig } from "../config/ConfigCommand.ts"
import { serveWith } from "../run/RunCommand.ts"
import { countedExporters, exporterLines, neverWrote } from "./CountedExporters.ts"
import * as DemoHttpReceiver from "./DemoHttpReceiver.ts"
import {
  demoHealthResync,
  demoRemovalGrace,
  demoShutdownTimeout,
  progressInterval,
  untilAnswering,
} from "./DemoPacing.ts"
import { demoSettings } from "./DemoSettings.ts"
import { DemoTally } from "./DemoTally.ts"
import { demoUsage } from "./DemoUsage.ts"
import { fleetDemo } from "./FleetDemo.ts"
import { importSimulator, startDemoCluster } from "./SimulatedDemoCluster.ts"
import { tallyingProcessor } from "./TallyingProcessor.ts"

/** The demo's own options; every other argument is passed on to the setting flags, in order. */
const demoOptions: CommandLineSpec = {
  options: {
    nodes: "value",
    duration: "value",
    "fault-rate": "value",
    "fault-health": "value",
    churn: "value",
    seed: "value",
    "exec-latency": "value",
    "postgres-url": "value",
    dra: "switch",
    clusters: "value",
    "cross-cluster-swaps": "value",
  },
  others: "passed-on",
}

/**
 * The demo's config object, under the user's config file, environment and flags: the simulated
 * cluster's kubeconfig, the cluster name, a short removal grace, a short shutdown, the health server on the loopback
 * interface (a workstation) at a free port, the demo's HTTP receiver as the http exporter's endpoint,
 * the postgres exporter's database when one is given, its tables created, a short resync when GPU
 * health faults are on (nodes are otherwise read only when their device-plugin pod changes), and DRA
 * discovery when the simulated cluster runs NVIDIA's DRA driver.
 */
const demoConfig = (options: {
  readonly kubeconfigPath: string
  readonly port: number
  readonly httpEndpoint: string
  readonly postgresUrl: string | undefined
  readonly healthFaults: boolean
  readonly dra: boolean
}) => ({
  cluster: { name: "demo" },
  receivers: {
    kube_exec: {
      kubeconfig: options.kubeconfigPath,
      ...(options.healthFaults ? { resync: demoHealthResync } : {}),
      ...(options.dra ? { discovery: "dra" } : {}),
    },
  },
  processors: { inventory: { removalGrace: demoRemovalGrace } },
  exporters: {
    http: { endpoint: options.httpEndpoint },
    ...(options.postgresUrl === undefined ? {} : { postgres: { url: options.postgresUrl, autoMigrate: true } }),
  },
  service: {
    shutdownTimeout: demoShutdownTimeout,
    telemetry: { metrics: { address: "127.0.0.1", port: options.port } },
  },
})

/** The kubectl command that shows the node labels the service writes, when it writes them. */
const nodeLabelsCommand = (loaded: LoadedServiceConfig, kubeconfigPath: string): string | undefined => {
  const receiver = loaded.config.receivers.find((candidate) => candidate.type === "kube_exec")
  // The config the kube_exec receiver's own settings built.
  const labels = (receiver?.config as KubeExecConfig | undefined)?.nodeLabels
  if (labels === undefined || !labels.enabled) return undefined
  return `kubectl --kubeconfig ${kubeconfigPath} get nodes -L ${labels.prefix}/gpu-0,${labels.prefix}/chassis`
}

/** Whether the pipeline's http exporter sends to the demo's receiver. */
const sendsTo = (loaded: LoadedServiceConfig, endpoint: string): boolean =>
  loaded.config.exporters.some(
    (exporter) => exporter.type === "http" && valueAt(loaded.file, `exporters.${exporter.id}.endpoint`) === endpoint,
  )

/** The removal grace in effect, as the summary explains it. */
const removalGraceOf = (loaded: LoadedServiceConfig): number => {
  const written = valueAt(loaded.file, `processors.inventory.${removalGraceSetting.key}`)
  const parsed = removalGraceSetting.type.fromFile(written, true)
  return Result.isSuccess(parsed) ? parsed.success : 0
}

/** `gpu-serials demo`: the real service against the built-in simulated cluster. */
export const demoCommand = Effect.fn("DemoCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const commandLine = parseCommandLine(argv, demoOptions)
  const rest = commandLine.positionals
  const { settings, problems } = demoSettings(commandLine.options)
  if (commandLine.problems.length + problems.length > 0) {
    return yield* usageFailure("demo", [...commandLine.problems.map(optionProblem), ...problems], demoUsage)
  }
  const simulator = yield* importSimulator.pipe(Effect.result)
  if (Result.isFailure(simulator)) {
    yield* io.stderr(simulator.failure)
    return ExitCode.failure
  }
  if (settings.clusters !== undefined) {
    return yield* fleetDemo({
      simulator: simulator.success,
      settings: { ...settings, clusters: settings.clusters },
      passedOn: rest,
      postgresUrl: commandLine.options.get("postgres-url"),
    })
  }
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const cluster = yield* startDemoCluster(simulator.success, settings)
      yield* io.stderr(
        `simulated cluster at ${cluster.url} with ${cluster.nodeNames().length} GPU nodes` +
          `${settings.dra ? ", GPUs allocated through NVIDIA's DRA driver" : ""}\n` +
          `  kubectl --kubeconfig ${cluster.kubeconfigPath} get pods -n ${cluster.namespace}\n` +
          (settings.dra
            ? `  kubectl --kubeconfig ${cluster.kubeconfigPath} get resourceslices --field-selector spec.driver=gpu.nvidia.com\n`
            : ""),
      )
      const httpReceiver = yield* DemoHttpReceiver.start
      // The simulated cluster, not the one a KUBECONFIG variable of the shell points at; --kubeconfig still can.
      const { KUBECONFIG: _kubeconfig, ...env } = io.env
      const loaded = yield* loadServiceConfig(rest, {
        base: demoConfig({
          kubeconfigPath: cluster.kubeconfigPath,
          port: yield* Effect.promise(freePort),
          httpEndpoint: httpReceiver.url,
          postgresUrl: commandLine.options.get("postgres-url"),
          healthFaults: settings.healthFaults > 0,
          dra: settings.dra,
        }),
        env,
      }).pipe(Effect.result)
      if (Result.isFailure(loaded)) return yield* reportInvalidConfig(loaded.failure)
      const demo = loaded.success
      const labelsCommand = nodeLabelsCommand(demo, cluster.kubeconfigPath)
      if (labelsCommand !== undefined) yield* io.stderr(`node labels with GPU serials:\n  ${labelsCommand}\n`)
      const tally = new DemoTally({ dra: settings.dra })
      const started = yield* Clock.currentTimeMillis
      const elapsedSeconds = Clock.currentTimeMillis.pipe(Effect.map((now) => (now - started) / 1000))
      const address = demo.config.telemetry.serverAddress
      const host = address === "" ? "127.0.0.1" : address.includes(":") ? `[${address}]` : address
      const tallied = ComponentRegistry.make({
        ...builtinComponents,
        processors: builtinComponents.processors.map((processor) => tallyingProcessor(processor, tally)),
      })
      const counted = countedExporters(demo.exporters)
      const service = yield* serveWith({ ...demo, exporters: counted.exporters }, tallied).pipe(Effect.forkScoped)
      const healthServer = `http://${host}:${demo.config.telemetry.serverPort}`
      yield* untilAnswering(`${healthServer}/healthz`).pipe(
        Effect.andThen(io.stderr(`health and metrics at ${healthServer}/metrics\n`)),
        Effect.andThen(demo.config.fleet.page ? io.stderr(`fleet page at ${healthServer}/\n`) : Effect.void),
        Effect.forkScoped,
      )
      const progress = yield* Effect.sleep(progressInterval).pipe(
        Effect.andThen(elapsedSeconds),
        Effect.flatMap((elapsed) => io.stderr(tally.progress(elapsed))),
        Effect.forever,
        Effect.forkScoped,
      )
      const exitCode =
        settings.durationMs === 0
          ? yield* Fiber.join(service)
          : yield* Fiber.join(service).pipe(
              Effect.timeoutOption(settings.durationMs),
              Effect.flatMap((finished) =>
                finished._tag === "Some"
                  ? Effect.succeed(finished.value)
                  : Fiber.interrupt(service).pipe(Effect.as(ExitCode.ok)),
              ),
            )
      yield* Fiber.interrupt(progress)
      yield* io.stderr(tally.summary(yield* elapsedSeconds, removalGraceOf(demo)))
      const exporters = yield* counted.stats
      yield* io.stderr(`${exporterLines(exporters).join("\n")}\n`)
      if (sendsTo(demo, httpReceiver.url)) {
        const { requests, records } = httpReceiver.counts()
        yield* io.stderr(`  http receiver at ${httpReceiver.url}: ${records} records in ${requests} POSTs\n`)
      }
      // An exporter the user asked for that never reached its sink is a demo that did not do its work.
      const silent = exporters.filter((exporter) => neverWrote(exporter.stats)).map((exporter) => exporter.id)
      if (exitCode === ExitCode.ok && silent.length > 0) {
        yield* io.stderr(`gpu-serials demo: ${silent.join(", ")} never wrote a record\n`)
        return ExitCode.failure
      }
      return exitCode
    }),
  ).pipe(
    Effect.catch((message: string) =>
      io
        .stderr(`gpu-serials demo: the simulated cluster could not start: ${message}\n`)
        .pipe(Effect.as(ExitCode.failure)),
    ),
  )
})
