import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  BoardExchange,
  type ChurnRates,
  CrossClusterTruth,
  type FaultRates,
  type PodTimings,
  parseLedger,
  type SimulatedCluster,
  startSimulatedCluster,
} from "@gpu-serials/kube-sim"
import * as Effect from "effect/Effect"
import { type DemoNatsTopology, startDemoNatsTopology } from "../src/cli/commands/demo/DemoNatsTopology.ts"
import { untilLeafStreams } from "../src/cli/commands/demo/LeafStreamsWait.ts"
import { natsServerExecutable } from "../src/cli/commands/demo/NatsServerProcess.ts"
import { freePort } from "../src/health/FreePort.ts"
import { type CrossClusterReport, compareCrossClusterMoves } from "./CrossClusterComparison.ts"
import { ServiceRuns } from "./ServiceRuns.ts"

/** The stream and bucket each cluster's service writes on its leaf, which the hub sources (docs/hub.md). */
const clusterStream = "GPU_SERIALS"
const clusterKvBucket = "gpu_serials"

export interface FleetAccuracyOptions {
  /** Simulated clusters, 2 or more, named `accuracy-1`, `accuracy-2`, … */
  readonly clusters: number
  /** GPU nodes of each cluster. */
  readonly nodes: number
  readonly seed: string
  /** How long churn, faults and the swaps between clusters last. */
  readonly churnMs: number
  /** Changes within each cluster while churn lasts. */
  readonly churn: Partial<ChurnRates>
  /** Boards each cluster swaps with another cluster per minute while churn lasts. */
  readonly crossClusterSwapsPerMinute: number
  readonly faults: Partial<FaultRates>
  readonly removalGraceMs: number
  readonly resyncMs: number
  readonly timeoutMs: number
  readonly qps: number
  /** Where the ledgers and each service's records and logs are kept; a temporary folder removed after when absent. */
  readonly outputDir?: string
  readonly podTimings?: Partial<PodTimings>
  /** Compiled `gpu-serials` CLI and the folder it runs in. */
  readonly cli: string
  readonly cwd: string
  readonly progress: (line: string) => void
}

export interface FleetAccuracyOutcome {
  readonly report: CrossClusterReport
  /** Boards the simulated clusters swapped between them. */
  readonly boardsSwapped: number
  /** A service process that failed (exited on its own, or not 0 after SIGTERM), named by its cluster or `hub`. */
  readonly failures: ReadonlyArray<string>
  readonly syncSeconds: number
  /** From the end of churn to the end of the wait for every reportable move. */
  readonly waitedSeconds: number
  readonly wallSeconds: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const noChurn: ChurnRates = {
  podRestartsPerMinute: 0,
  nodeJoinsPerMinute: 0,
  nodeLeavesPerMinute: 0,
  gpuSwapsPerMinute: 0,
  readinessFlapsPerMinute: 0,
  crossClusterSwapsPerMinute: 0,
}

/** The clusters of a fleet accuracy run of `count`. */
export const fleetAccuracyClusterNames = (count: number): ReadonlyArray<string> =>
  Array.from({ length: count }, (_, index) => `accuracy-${index + 1}`)

/**
 * The hub's config file: receiver `nats` sourcing every cluster's leaf into the hub's nats-server,
 * processor `fleet`, the stdout exporter whose records the run compares. JSON is YAML.
 */
const hubConfig = (hubUrl: string, clusters: ReadonlyArray<string>, port: number): string =>
  JSON.stringify({
    cluster: { name: "fleet" },
    receivers: {
      nats: { url: hubUrl, clusters: [...clusters], clusterStream, clusterKvBucket, kvBucket: clusterKvBucket },
    },
    processors: { fleet: {} },
    exporters: { stdout: {} },
    service: {
      telemetry: { metrics: { address: "127.0.0.1", port }, logs: { level: "warn" } },
      pipelines: { gpus: { receivers: ["nats"], processors: ["fleet"], exporters: ["stdout"] } },
    },
  })

/**
 * The accuracy run of a fleet: `clusters` simulated clusters sharing one board exchange, a leaf
 * nats-server each and a hub nats-server (the fleet demo's topology), one `gpu-serials run` per cluster
 * publishing to its leaf (inventory in the leaf's bucket), and the hub's `gpu-serials run` (receiver
 * `nats`, processor `fleet`, stdout). After the hub holds every GPU, churn, faults and swaps between
 * clusters last `churnMs`; then calm until every reportable cross-cluster move is reported (at most a
 * full read of the fleet, `REMOVAL_GRACE` and a reading after), and the hub's `moved` records are
 * compared with the moves the clusters' ledgers record.
 */
export const runFleetAccuracy = async (options: FleetAccuracyOptions): Promise<FleetAccuracyOutcome> => {
  if (!Number.isInteger(options.clusters) || options.clusters < 2)
    throw new RangeError(`a fleet has at least 2 clusters, not ${options.clusters}`)
  const executable = natsServerExecutable(process.env.PATH)
  if (executable === undefined)
    throw new Error("--clusters needs nats-server on the PATH or in /usr/sbin; none was found")
  const startedAt = Date.now()
  const dir = options.outputDir ?? (await mkdtemp(join(tmpdir(), "gpu-serials-fleet-accuracy-")))
  await mkdir(dir, { recursive: true })
  const names = fleetAccuracyClusterNames(options.clusters)
  const ledgerPath = (name: string) => join(dir, `${name}.ledger.jsonl`)
  let nats: DemoNatsTopology | undefined
  const sims = new Map<string, SimulatedCluster>()
  const services = new Map<string, ServiceRuns>()
  try {
    nats = await startDemoNatsTopology(executable, names)
    const exchange = new BoardExchange({ seed: options.seed })
    for (const name of names) {
      const sim = await startSimulatedCluster({
        nodes: options.nodes,
        seed: `${options.seed}-${name}`,
        clusterName: name,
        exchange,
        ledgerPath: ledgerPath(name),
        ...(options.podTimings === undefined ? {} : { podTimings: options.podTimings }),
      })
      sims.set(name, sim)
      const service = new ServiceRuns({
        cli: options.cli,
        cwd: options.cwd,
        env: {
          CLUSTER_NAME: name,
          KUBECONFIG: sim.kubeconfigPath,
          REMOVAL_GRACE: `${options.removalGraceMs}ms`,
          RESYNC: `${options.resyncMs}ms`,
          TIMEOUT: `${options.timeoutMs}ms`,
          QPS: String(options.qps),
          SERVER_ADDRESS: "127.0.0.1",
          SERVER_PORT: String(await freePort()),
          LOG_LEVEL: "warn",
          INVENTORY_STORE: "nats",
          EXPORTER_TYPE: "nats",
          NATS_URL: nats.leafUrls.get(name) ?? "",
          NATS_STREAM: clusterStream,
          // nats-server before 2.10.14 stalls the hub's source on a message carrying Nats-Expected-Stream.
          NATS_STREAM_EXPECT: "false",
          NATS_KV_BUCKET: clusterKvBucket,
          HEARTBEAT_INTERVAL: "5s",
        },
        logPath: join(dir, `${name}.log`),
      })
      services.set(name, service)
      service.start()
    }
    const leaves = nats.leafUrls
    await Effect.runPromise(
      Effect.forEach(names, (name) =>
        untilLeafStreams(leaves.get(name) ?? "", [clusterStream, `KV_${clusterKvBucket}`]),
      ),
    )
    const hubConfigPath = join(dir, "hub.yaml")
    await writeFile(hubConfigPath, hubConfig(nats.hubUrl, names, await freePort()))
    const hub = new ServiceRuns({
      cli: options.cli,
      cwd: options.cwd,
      env: { GPU_SERIALS_CONFIG: hubConfigPath },
      logPath: join(dir, "hub.log"),
      recordsPath: join(dir, "hub.records"),
    })
    services.set("hub", hub)
    hub.start()

    const readable = () =>
      [...sims.values()].reduce(
        (sum, sim) => sum + [...sim.ledger.whereNow().values()].filter((gpu) => gpu.readable).length,
        0,
      )
    options.progress(
      `accuracy: ${names.length} clusters of ${options.nodes} nodes, ${readable()} readable GPUs, a leaf nats-server ` +
        `each and a hub at ${nats.hubUrl}; REMOVAL_GRACE ${options.removalGraceMs / 1000} s, RESYNC ${options.resyncMs / 1000} s`,
    )
    const held = () => {
      const uuids = new Set<string>()
      for (const event of hub.events)
        if (event.event === "removed") uuids.delete(event.uuid)
        else uuids.add(event.uuid)
      return uuids.size
    }
    const syncDeadline = Date.now() + 60_000 + options.nodes * options.clusters * 50
    while (held() < readable() && Date.now() < syncDeadline) await sleep(250)
    const syncSeconds = (Date.now() - startedAt) / 1000
    options.progress(
      `accuracy: the hub holds ${held()} GPUs after ${syncSeconds.toFixed(1)} s; churn, faults and ` +
        `${options.crossClusterSwapsPerMinute} swaps a minute between clusters (each) for ${options.churnMs / 1000} s`,
    )

    // The longest a cluster's service goes without reading a node that answers: a resync, every node at QPS, one deadline.
    const settleMs = options.resyncMs + (options.nodes / options.qps) * 1000 + options.timeoutMs
    for (const sim of sims.values()) {
      sim.churn.setRates({
        ...noChurn,
        ...options.churn,
        crossClusterSwapsPerMinute: options.crossClusterSwapsPerMinute,
      })
      sim.faults.setRates({ healthStageSeconds: (2 * settleMs) / 1000, ...options.faults })
    }
    await sleep(options.churnMs)
    for (const sim of sims.values()) {
      sim.churn.setRates(noChurn)
      sim.faults.clear()
    }
    const churnStoppedAt = Date.now()
    const longest = churnStoppedAt + settleMs + options.removalGraceMs + options.timeoutMs
    options.progress(
      `accuracy: churn stopped; waiting for the hub to report every move, at most ${((longest - churnStoppedAt) / 1000).toFixed(0)} s`,
    )
    const compare = (truth: CrossClusterTruth, endedAt: number) =>
      compareCrossClusterMoves({
        truth,
        events: hub.events,
        settleMs,
        readingWindowMs: options.timeoutMs,
        endedAt,
      })
    const liveTruth = () =>
      CrossClusterTruth.of([...sims].map(([cluster, sim]) => ({ cluster, entries: sim.ledger.entries() })))
    // Once every move's board has spent a read of the fleet where it went, only a move the hub missed is left to wait for.
    const shortest = churnStoppedAt + settleMs
    while (Date.now() < longest) {
      const now = Date.now()
      if (now >= shortest && compare(liveTruth(), now).missed_cross_cluster === 0) break
      await sleep(1_000)
    }
    const waitedSeconds = (Date.now() - churnStoppedAt) / 1000
    await Promise.all([...services.values()].map((service) => service.close()))
    const endedAt = Date.now()
    const boardsSwapped = exchange.swaps().reduce((boards, swap) => boards + swap.boards.length, 0)
    await Promise.all([...sims.values()].map((sim) => sim.close()))
    sims.clear()
    // The comparison reads the ledgers back from their files, as any other consumer of them would.
    const truth = CrossClusterTruth.of(
      await Promise.all(
        names.map(async (cluster) => ({ cluster, entries: parseLedger(await readFile(ledgerPath(cluster), "utf8")) })),
      ),
    )
    const failures = [...services]
      .map(([name, service]) => (service.failure === undefined ? undefined : `${name}: ${service.failure}`))
      .filter((failure) => failure !== undefined)
    return {
      report: compare(truth, endedAt),
      boardsSwapped,
      failures,
      syncSeconds,
      waitedSeconds,
      wallSeconds: (Date.now() - startedAt) / 1000,
    }
  } finally {
    await Promise.all([...services.values()].map((service) => service.close()))
    await Promise.all([...sims.values()].map((sim) => sim.close()))
    await nats?.close()
    if (options.outputDir === undefined) await rm(dir, { recursive: true, force: true })
  }
}
