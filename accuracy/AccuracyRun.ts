import { randomBytes } from "node:crypto"
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  type ChurnRates,
  type FaultRates,
  type PodTimings,
  parseLedger,
  type SimulatedCluster,
  startSimulatedCluster,
} from "@gpu-serials/kube-sim"
import { freePort } from "../src/health/FreePort.ts"
import { ServiceRuns } from "./ServiceRuns.ts"
import { prepareStore, type StoreName, type StoreScenario } from "./StoreScenario.ts"
import { type AccuracyReport, compareWithTruth } from "./TruthComparison.ts"

/** How often the inventory looks for expired grace periods: a removal can come this long after its grace. */
const inventoryTickMs = 5_000

export interface AccuracyOptions {
  readonly nodes: number
  readonly seed: string
  /**
   * NVIDIA's DRA driver instead of the device plugin: the cluster publishes ResourceSlices and runs the
   * driver's kubelet-plugin pods, and the services run with `DISCOVERY=dra`.
   */
  readonly dra?: boolean
  /** How long churn and faults last; the services restart half-way through. */
  readonly churnMs: number
  readonly churn: Partial<ChurnRates>
  readonly faults: Partial<FaultRates>
  /** One scenario per store, all run at once against the same cluster. */
  readonly stores: ReadonlyArray<StoreName>
  readonly removalGraceMs: number
  readonly resyncMs: number
  /** The services' `TIMEOUT`: the deadline of one pod's reading. */
  readonly timeoutMs: number
  readonly qps: number
  readonly postgresUrl: string
  /** Where the ledger, each scenario's records and each service's logs are kept; a temporary folder removed after when absent. */
  readonly outputDir?: string
  readonly podTimings?: Partial<PodTimings>
  /** Compiled `gpu-serials` CLI and the folder it runs in. */
  readonly cli: string
  readonly cwd: string
  /** Progress, one line at a time. */
  readonly progress: (line: string) => void
}

export interface ScenarioOutcome {
  readonly store: StoreName
  readonly durable: boolean
  /** Service processes started: 2 with the restart. */
  readonly runs: number
  /** A service process that failed (exited on its own, or not 0 after SIGTERM). */
  readonly failure?: string
  readonly report: AccuracyReport
}

export interface AccuracyOutcome {
  readonly scenarios: ReadonlyArray<ScenarioOutcome>
  /** Stores asked for that this machine cannot provide, with why. */
  readonly skipped: ReadonlyArray<{ readonly store: StoreName; readonly reason: string }>
  readonly syncSeconds: number
  /** From the end of churn to the end of the wait for convergence. */
  readonly waitedSeconds: number
  readonly wallSeconds: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Scenario {
  readonly store: StoreScenario
  readonly service: ServiceRuns
}

const noChurn: ChurnRates = {
  podRestartsPerMinute: 0,
  nodeJoinsPerMinute: 0,
  nodeLeavesPerMinute: 0,
  gpuSwapsPerMinute: 0,
  readinessFlapsPerMinute: 0,
}

/**
 * The accuracy run: a simulated cluster with its ground-truth ledger, one `gpu-serials run` process per
 * store against it (all at once, each with its own API client, QPS and store), an initial sync, churn and
 * faults with a restart of every service half-way, then calm until every inventory equals the truth (at
 * least `REMOVAL_GRACE` plus the inventory's tick, at most that plus one full read of the fleet: a resync
 * and the reading of every node at `QPS`), and each service's exported events compared with the ledger.
 */
export const runAccuracy = async (options: AccuracyOptions): Promise<AccuracyOutcome> => {
  const startedAt = Date.now()
  const dir = options.outputDir ?? (await mkdtemp(join(tmpdir(), "gpu-serials-accuracy-")))
  await mkdir(dir, { recursive: true })
  const ledgerPath = join(dir, "ledger.jsonl")
  const unique = randomBytes(4).toString("hex")
  let cluster: SimulatedCluster | undefined
  const scenarios: Array<Scenario> = []
  const skipped: Array<{ store: StoreName; reason: string }> = []
  try {
    cluster = await startSimulatedCluster({
      nodes: options.nodes,
      seed: options.seed,
      ledgerPath,
      dra: options.dra === true,
      ...(options.podTimings === undefined ? {} : { podTimings: options.podTimings }),
    })
    const sim = cluster
    const readable = () => [...sim.ledger.whereNow().values()].filter((gpu) => gpu.readable).length
    options.progress(
      `accuracy: ${sim.nodeNames().length} nodes${options.dra === true ? " with NVIDIA's DRA driver" : ""}, ` +
        `${sim.ledger.whereNow().size} GPUs (${readable()} readable); ` +
        `stores ${options.stores.join(", ")}; REMOVAL_GRACE ${options.removalGraceMs / 1000} s, RESYNC ${options.resyncMs / 1000} s`,
    )
    for (const name of options.stores) {
      const store = await prepareStore(name, { postgresUrl: options.postgresUrl, unique })
      if ("unavailable" in store) {
        skipped.push({ store: name, reason: store.unavailable })
        options.progress(`accuracy: store ${name} skipped: ${store.unavailable}`)
        continue
      }
      const service = new ServiceRuns({
        cli: options.cli,
        cwd: options.cwd,
        env: {
          CLUSTER_NAME: "accuracy",
          KUBECONFIG: sim.kubeconfigPath,
          REMOVAL_GRACE: `${options.removalGraceMs}ms`,
          RESYNC: `${options.resyncMs}ms`,
          TIMEOUT: `${options.timeoutMs}ms`,
          QPS: String(options.qps),
          SERVER_ADDRESS: "127.0.0.1",
          SERVER_PORT: String(await freePort()),
          LOG_LEVEL: "warn",
          DISCOVERY: options.dra === true ? "dra" : "device-plugin",
          ...store.env,
        },
        logPath: join(dir, `${name}.log`),
        recordsPath: join(dir, `${name}.records`),
      })
      scenarios.push({ store, service })
    }
    for (const scenario of scenarios) scenario.service.start()

    // The longest a service goes without reading a node that answers: a resync, every node at QPS, one deadline.
    const healthSettleMs = options.resyncMs + (options.nodes / options.qps) * 1000 + options.timeoutMs
    const syncDeadline = Date.now() + 60_000 + options.nodes * 50
    const held = (scenario: Scenario) => {
      const uuids = new Set<string>()
      for (const event of scenario.service.events)
        if (event.event === "removed") uuids.delete(event.uuid)
        else uuids.add(event.uuid)
      return uuids.size
    }
    while (scenarios.some((scenario) => held(scenario) < readable()) && Date.now() < syncDeadline) await sleep(250)
    const syncSeconds = (Date.now() - startedAt) / 1000
    options.progress(
      `accuracy: initial sync after ${syncSeconds.toFixed(1)} s; churn and faults for ${options.churnMs / 1000} s`,
    )

    sim.churn.setRates({ ...noChurn, ...options.churn })
    // Each step of a health fault lasts twice what a service needs to read every node once, so each is seen.
    sim.faults.setRates({ healthStageSeconds: (2 * healthSettleMs) / 1000, ...options.faults })
    await sleep(options.churnMs / 2)
    options.progress("accuracy: restarting every service")
    await Promise.all(scenarios.map((scenario) => scenario.service.restart()))
    await sleep(options.churnMs / 2)
    sim.churn.setRates(noChurn)
    sim.faults.clear()
    const churnStoppedAt = Date.now()

    const fleetReadMs = options.resyncMs + (sim.nodeNames().length / options.qps) * 1000
    const shortest = churnStoppedAt + options.removalGraceMs + inventoryTickMs
    const longest = shortest + fleetReadMs
    options.progress(
      `accuracy: churn stopped; waiting for convergence, ${((shortest - churnStoppedAt) / 1000).toFixed(0)} to ${((longest - churnStoppedAt) / 1000).toFixed(0)} s`,
    )
    const entries = () => sim.ledger.entries()
    const compare = (scenario: Scenario, now: number) =>
      compareWithTruth({
        ledger: entries(),
        events: scenario.service.events,
        runs: scenario.service.runs(now),
        durable: scenario.store.durable,
        keepsGoneNodes: scenario.store.keepsGoneNodes,
        keepsHealth: scenario.store.keepsHealth,
        keepsOneGpuPerIndex: scenario.store.keepsOneGpuPerIndex,
        removalGraceMs: options.removalGraceMs,
        removalTickMs: inventoryTickMs,
        readingWindowMs: options.timeoutMs,
        churnStoppedAt,
        healthSettleMs,
      })
    while (Date.now() < longest) {
      const now = Date.now()
      if (now >= shortest && scenarios.every((scenario) => compare(scenario, now).converged_s !== null)) break
      await sleep(1_000)
    }
    const waitedSeconds = (Date.now() - churnStoppedAt) / 1000
    await Promise.all(scenarios.map((scenario) => scenario.service.close()))
    const stoppedAt = Date.now()
    await sim.close()
    cluster = undefined
    // The comparison reads the ledger back from its file, as any other consumer of it would.
    const ledger = parseLedger(await readFile(ledgerPath, "utf8"))
    const outcomes = scenarios.map(({ store, service }): ScenarioOutcome => {
      const failure = service.failure
      return {
        store: store.store,
        durable: store.durable,
        runs: service.runs(stoppedAt).length,
        ...(failure === undefined ? {} : { failure }),
        report: compareWithTruth({
          ledger,
          events: service.events,
          runs: service.runs(stoppedAt),
          durable: store.durable,
          keepsGoneNodes: store.keepsGoneNodes,
          keepsHealth: store.keepsHealth,
          keepsOneGpuPerIndex: store.keepsOneGpuPerIndex,
          removalGraceMs: options.removalGraceMs,
          removalTickMs: inventoryTickMs,
          readingWindowMs: options.timeoutMs,
          churnStoppedAt,
          healthSettleMs,
        }),
      }
    })
    return { scenarios: outcomes, skipped, syncSeconds, waitedSeconds, wallSeconds: (Date.now() - startedAt) / 1000 }
  } finally {
    await Promise.all(scenarios.map((scenario) => scenario.service.close()))
    await cluster?.close()
    await Promise.all(scenarios.map((scenario) => scenario.store.close().catch(() => undefined)))
    if (options.outputDir === undefined) await rm(dir, { recursive: true, force: true })
  }
}
