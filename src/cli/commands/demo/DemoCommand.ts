import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import { parseGoDuration } from "../../../config/GoDuration.ts"
import { valueAt } from "../../../config/ResolveSettings.ts"
import { freePort } from "../../../health/FreePort.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
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
import { DemoTally } from "./DemoTally.ts"
import { demoUsage } from "./DemoUsage.ts"
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
  },
  others: "passed-on",
}

/** Short enough that churn shows `removed` events within a demo's run. */
const demoRemovalGrace = "10s"
const progressInterval = "5 seconds"
const demoShutdownTimeout = "5s"
/** With health faults, nodes are read this often, so a GPU's health change shows within a demo's run. */
const demoHealthResync = "5s"
/** The least time each step of a demo's health fault lasts: a resync and a reading see it. */
const demoHealthStageSeconds = 8

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
  // A demo's sink that cannot be reached holds its end only this long.
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

/**
 * The simulated cluster is a development package: loaded on demand so that the production image, installed
 * without development dependencies, runs every other command without it.
 */
const loadSimulator = () => import("@gpu-serials/kube-sim")

type Simulator = Awaited<ReturnType<typeof loadSimulator>>
type SimulatedCluster = Awaited<ReturnType<Simulator["startSimulatedCluster"]>>

/** Node's failure to find the simulator package itself, not a module missing inside it. */
const isSimulatorMissing = (cause: unknown): boolean =>
  cause instanceof Error &&
  "code" in cause &&
  cause.code === "ERR_MODULE_NOT_FOUND" &&
  cause.message.includes("'@gpu-serials/kube-sim'")

/** Fails with the line that tells the user why there is no simulated cluster. */
const importSimulator = Effect.tryPromise({
  try: loadSimulator,
  catch: (cause) =>
    isSimulatorMissing(cause)
      ? "gpu-serials demo: the simulated cluster is not installed in this build; run the demo from a source checkout after `npm ci`\n"
      : `gpu-serials demo: the simulated cluster could not be loaded: ${defectMessage(cause)}\n`,
})

interface DemoSettings {
  readonly nodes: number
  readonly durationMs: number
  readonly faultRate: number
  /** Share of healthy GPUs per minute that turn degraded or failed. */
  readonly healthFaults: number
  readonly churn: number
  readonly seed: string
  readonly execLatencyMs?: number
  /** NVIDIA's DRA driver instead of the device plugin: ResourceSlices and kubelet-plugin pods. */
  readonly dra: boolean
}

const demoSettings = (options: ReadonlyMap<string, string>) => {
  const problems: Array<{ message: string }> = []
  const number = (name: string, fallback: number, valid: (value: number) => boolean, rule: string): number => {
    const text = options.get(name)
    if (text === undefined) return fallback
    const value = Number(text)
    if (text.trim() === "" || !valid(value)) problems.push({ message: `--${name} must be ${rule}, not ${text}` })
    return value
  }
  const duration = (name: string, fallbackMs: number): number | undefined => {
    const text = options.get(name)
    if (text === undefined) return fallbackMs
    const parsed = parseGoDuration(text)
    if (Result.isFailure(parsed) || parsed.success < 0) {
      problems.push({ message: `--${name} must be a duration such as 20s or 1m30s, not ${text}` })
      return undefined
    }
    return parsed.success
  }
  const durationMs = duration("duration", 20_000) ?? 0
  const execLatencyMs = options.has("exec-latency") ? duration("exec-latency", 0) : undefined
  const settings: DemoSettings = {
    nodes: number("nodes", 8, (value) => Number.isInteger(value) && value > 0 && value <= 10_000, "1 to 10000"),
    durationMs,
    faultRate: number("fault-rate", 0, (value) => value >= 0 && value <= 1, "a probability from 0 to 1"),
    healthFaults: number("fault-health", 0, (value) => value >= 0 && value <= 1, "a share from 0 to 1"),
    churn: number("churn", 0, (value) => value >= 0 && value <= 600, "0 to 600 per minute"),
    seed: options.get("seed") ?? "gpu-serials",
    dra: options.has("dra"),
    ...(execLatencyMs === undefined ? {} : { execLatencyMs }),
  }
  return { settings, problems }
}

const startCluster = (simulator: Simulator, settings: DemoSettings) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        simulator.startSimulatedCluster({
          nodes: settings.nodes,
          seed: settings.seed,
          clusterName: "demo",
          dra: settings.dra,
          // A fleet that shows every identity case in 8 nodes; larger demos follow the same proportions.
          modelMix: { "gb200-nvl72": 2, "h100-hgx": 2, "a100-mig": 1, t4: 1, rtx4090: 1, "broken-driver": 1 },
          ...(settings.execLatencyMs === undefined ? {} : { execLatency: settings.execLatencyMs }),
          faults: {
            serverError: settings.faultRate,
            throttle: settings.faultRate,
            execHang: settings.faultRate,
            execNonZeroExit: settings.faultRate,
            execTruncated: settings.faultRate,
            execGarbage: settings.faultRate,
            healthFaultsPerGpuMinute: settings.healthFaults,
            healthStageSeconds: demoHealthStageSeconds,
          },
          churn: {
            podRestartsPerMinute: settings.churn,
            gpuSwapsPerMinute: settings.churn,
            nodeJoinsPerMinute: settings.churn / 2,
            nodeLeavesPerMinute: settings.churn / 2,
          },
        }),
      catch: defectMessage,
    }),
    (cluster: SimulatedCluster) => Effect.promise(() => cluster.close()),
  )

/** Until `url` answers at all (the health server listens), asking every 100 ms for at most 30 s. */
const untilAnswering = (url: string): Effect.Effect<void> =>
  Effect.tryPromise((signal) => fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(1_000)]) })).pipe(
    Effect.flatMap((answer) => Effect.promise(() => answer.body?.cancel() ?? Promise.resolve())),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo({ times: 300 }))),
    Effect.ignore,
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
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const cluster = yield* startCluster(simulator.success, settings)
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
