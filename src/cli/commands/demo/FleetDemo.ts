import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import { freePort } from "../../../health/FreePort.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
import { builtinComponents } from "../../../service/BuiltinComponents.ts"
import { ComponentRegistry } from "../../../service/ComponentRegistry.ts"
import type { LoadedServiceConfig } from "../../../service/PipelineConfig.ts"
import { CliIo } from "../../CliIo.ts"
import { ExitCode } from "../../ExitCode.ts"
import { loadServiceConfig } from "../../ServiceConfigLoader.ts"
import { reportInvalidConfig } from "../config/ConfigCommand.ts"
import { serveWith } from "../run/RunCommand.ts"
import { countedExporters, exporterLines, neverWrote } from "./CountedExporters.ts"
import { startDemoNatsTopology } from "./DemoNatsTopology.ts"
import {
  demoHealthResync,
  demoRemovalGrace,
  demoShutdownTimeout,
  progressInterval,
  untilAnswering,
} from "./DemoPacing.ts"
import type { DemoSettings } from "./DemoSettings.ts"
import { FleetDemoTally } from "./FleetDemoTally.ts"
import { untilLeafStreams } from "./LeafStreamsWait.ts"
import { natsServerExecutable } from "./NatsServerProcess.ts"
import { type Simulator, startDemoCluster } from "./SimulatedDemoCluster.ts"
import { tallyingProcessor } from "./TallyingProcessor.ts"

/** The stream and bucket each cluster's service writes on its leaf, which the hub sources (docs/hub.md). */
const clusterStream = "GPU_SERIALS"
const clusterKvBucket = "gpu_serials"
/** Often enough that the hub hears each cluster within a demo's run while nothing changes. */
const demoHeartbeatInterval = "5s"

/**
 * A cluster's service in the fleet demo: the simulated cluster's kubeconfig, the inventory kept in the
 * leaf's KV bucket, and the nats exporter alone, to the leaf's stream. Nats-Expected-Stream stays off
 * its publishes (NATS_STREAM_EXPECT=false), whatever nats-server the machine has: servers before
 * 2.10.14 stall the hub's source on such a message, and the demo's freshly made leaf holds no other
 * stream on those subjects for the header to guard against. Only its warnings reach stderr.
 */
const clusterConfig = (options: {
  readonly name: string
  readonly kubeconfigPath: string
  readonly leafUrl: string
  readonly port: number
  readonly settings: DemoSettings
}) => ({
  cluster: { name: options.name },
  receivers: {
    kube_exec: {
      kubeconfig: options.kubeconfigPath,
      ...(options.settings.healthFaults > 0 ? { resync: demoHealthResync } : {}),
      ...(options.settings.dra ? { discovery: "dra" } : {}),
    },
  },
  processors: { inventory: { removalGrace: demoRemovalGrace, store: "nats" } },
  exporters: {
    nats: {
      url: options.leafUrl,
      stream: clusterStream,
      streamExpect: false,
      kvBucket: clusterKvBucket,
      heartbeatInterval: demoHeartbeatInterval,
    },
  },
  service: {
    shutdownTimeout: demoShutdownTimeout,
    telemetry: { metrics: { address: "127.0.0.1", port: options.port }, logs: { level: "warn" } },
    pipelines: { gpus: { exporters: ["nats"] } },
  },
})

/**
 * The hub's service, under the user's config file, environment and flags: receiver `nats` sourcing every
 * cluster's leaf into the hub's nats-server, processor `fleet`, the stdout exporter (and postgres when a
 * database is given), the health server and fleet page on the loopback interface at a free port.
 */
const hubConfig = (options: {
  readonly hubUrl: string
  readonly clusters: ReadonlyArray<string>
  readonly port: number
  readonly postgresUrl: string | undefined
}) => ({
  cluster: { name: "fleet" },
  receivers: {
    nats: {
      url: options.hubUrl,
      clusters: [...options.clusters],
      clusterStream,
      clusterKvBucket,
      kvBucket: clusterKvBucket,
    },
  },
  processors: { fleet: {} },
  exporters: {
    stdout: {},
    ...(options.postgresUrl === undefined ? {} : { postgres: { url: options.postgresUrl, autoMigrate: true } }),
  },
  service: {
    shutdownTimeout: demoShutdownTimeout,
    telemetry: { metrics: { address: "127.0.0.1", port: options.port } },
    pipelines: { gpus: { receivers: ["nats"], processors: ["fleet"], exporters: ["stdout"] } },
  },
})

/** The health server's URL a loaded config gives. */
const healthServerOf = (loaded: LoadedServiceConfig): string => {
  const address = loaded.config.telemetry.serverAddress
  const host = address === "" ? "127.0.0.1" : address.includes(":") ? `[${address}]` : address
  return `http://${host}:${loaded.config.telemetry.serverPort}`
}

/** The clusters of a fleet demo of `count`: demo-1, demo-2, … */
export const fleetClusterNames = (count: number): ReadonlyArray<string> =>
  Array.from({ length: count }, (_, index) => `demo-${index + 1}`)

/**
 * `gpu-serials demo --clusters N`: N simulated clusters sharing one board exchange, a leaf nats-server per
 * cluster and a hub nats-server, one service per cluster publishing to its leaf, and the hub's service,
 * whose records are the demo's stdout.
 */
export const fleetDemo = Effect.fn("FleetDemo")(function* (options: {
  readonly simulator: Simulator
  readonly settings: DemoSettings & { readonly clusters: number }
  /** The setting flags the user gave, for the hub's service. */
  readonly passedOn: ReadonlyArray<string>
  readonly postgresUrl: string | undefined
}) {
  const io = yield* CliIo
  const { simulator, settings } = options
  const executable = natsServerExecutable(io.env.PATH)
  if (executable === undefined) {
    yield* io.stderr(
      "gpu-serials demo: --clusters needs nats-server (https://github.com/nats-io/nats-server/releases, or the " +
        "nats-server package of your distribution) on the PATH or in /usr/sbin; none was found\n",
    )
    return ExitCode.failure
  }
  const names = fleetClusterNames(settings.clusters)
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const nats = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => startDemoNatsTopology(executable, names),
          catch: (cause) => `the nats-servers could not start: ${defectMessage(cause)}`,
        }),
        (topology) => Effect.promise(() => topology.close()),
      )
      const exchange = new simulator.BoardExchange({ seed: settings.seed })
      const clusterServices: Array<Fiber.Fiber<ExitCode>> = []
      for (const name of names) {
        const leafUrl = nats.leafUrls.get(name) ?? ""
        const cluster = yield* startDemoCluster(simulator, settings, {
          name,
          seed: `${settings.seed}-${name}`,
          exchange,
        })
        yield* io.stderr(
          `simulated cluster ${name} at ${cluster.url} with ${cluster.nodeNames().length} GPU nodes, ` +
            `its leaf nats-server at ${leafUrl} (JetStream domain ${name})\n` +
            `  kubectl --kubeconfig ${cluster.kubeconfigPath} get pods -n ${cluster.namespace}\n`,
        )
        const loaded = yield* loadServiceConfig([], {
          base: clusterConfig({
            name,
            kubeconfigPath: cluster.kubeconfigPath,
            leafUrl,
            port: yield* Effect.promise(freePort),
            settings,
          }),
          env: {},
        }).pipe(Effect.result)
        if (Result.isFailure(loaded)) return yield* reportInvalidConfig(loaded.failure)
        clusterServices.push(yield* serveWith(loaded.success).pipe(Effect.forkScoped))
      }
      yield* Effect.forEach(names, (name) =>
        untilLeafStreams(nats.leafUrls.get(name) ?? "", [clusterStream, `KV_${clusterKvBucket}`]),
      )

      // The simulated clusters, not the one a KUBECONFIG variable of the shell points at.
      const { KUBECONFIG: _kubeconfig, ...env } = io.env
      const loaded = yield* loadServiceConfig(options.passedOn, {
        base: hubConfig({
          hubUrl: nats.hubUrl,
          clusters: names,
          port: yield* Effect.promise(freePort),
          postgresUrl: options.postgresUrl,
        }),
        env,
      }).pipe(Effect.result)
      if (Result.isFailure(loaded)) return yield* reportInvalidConfig(loaded.failure)
      const hub = loaded.success
      yield* io.stderr(
        `hub nats-server at ${nats.hubUrl} (JetStream domain hub), sourcing the clusters' streams and buckets\n` +
          `  gpu-serials where <serial> --nats-url ${nats.hubUrl}\n`,
      )
      const tally = new FleetDemoTally()
      const started = yield* Clock.currentTimeMillis
      const elapsedSeconds = Clock.currentTimeMillis.pipe(Effect.map((now) => (now - started) / 1000))
      const tallied = ComponentRegistry.make({
        ...builtinComponents,
        processors: builtinComponents.processors.map((processor) => tallyingProcessor(processor, tally)),
      })
      const counted = countedExporters(hub.exporters)
      const hubService = yield* serveWith({ ...hub, exporters: counted.exporters }, tallied).pipe(Effect.forkScoped)
      const healthServer = healthServerOf(hub)
      yield* untilAnswering(`${healthServer}/healthz`).pipe(
        Effect.andThen(io.stderr(`hub health and metrics at ${healthServer}/metrics\n`)),
        Effect.andThen(hub.config.fleet.page ? io.stderr(`hub fleet page at ${healthServer}/\n`) : Effect.void),
        Effect.forkScoped,
      )
      const progress = yield* Effect.sleep(progressInterval).pipe(
        Effect.andThen(elapsedSeconds),
        Effect.flatMap((elapsed) => io.stderr(tally.progress(elapsed))),
        Effect.forever,
        Effect.forkScoped,
      )
      // Any service that ends ends the demo: none ends by itself unless it failed or was signalled.
      const services = Effect.raceAll([hubService, ...clusterServices].map((service) => Fiber.join(service)))
      const ended =
        settings.durationMs === 0
          ? yield* Effect.asSome(services)
          : yield* Effect.timeoutOption(services, settings.durationMs)
      yield* Fiber.interrupt(progress)
      yield* Fiber.interruptAll([hubService, ...clusterServices])
      const swapped = exchange.swaps().reduce((boards, swap) => boards + swap.boards.length, 0)
      yield* io.stderr(tally.summary(yield* elapsedSeconds, swapped))
      const exporters = yield* counted.stats
      yield* io.stderr(`${exporterLines(exporters).join("\n")}\n`)
      const exitCode = ended._tag === "Some" ? ended.value : ExitCode.ok
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
      io.stderr(`gpu-serials demo: the fleet could not start: ${message}\n`).pipe(Effect.as(ExitCode.failure)),
    ),
  )
})
