import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { ChurnRates, FaultRates } from "@gpu-serials/kube-sim"
import { Result } from "effect"
import { parseGoDuration } from "../src/config/GoDuration.ts"
import { runAccuracy } from "./AccuracyRun.ts"
import { runFleetAccuracy } from "./FleetAccuracyRun.ts"
import { scenarioLine, totalsOf } from "./ReportTotals.ts"
import { type StoreName, storeNames } from "./StoreScenario.ts"

const usage = `Usage: npm run accuracy -- [flags]

Runs gpu-serials against a simulated cluster with churn and faults, once per inventory store (all at
once, each restarted half-way), and compares what each exported with the cluster's ground truth.
Progress goes to stderr; stdout gets one JSON line per scenario, then one line of totals.

  --nodes N              GPU nodes (default 300)
  --churn D              how long churn and faults last (default 2m)
  --stores S,...         of ${storeNames.join(", ")} (default all)
  --removal-grace D      the services' REMOVAL_GRACE (default 30s)
  --resync D             the services' RESYNC (default 20s)
  --timeout D            the services' TIMEOUT (default 5s)
  --qps N                the services' QPS (default 50)
  --seed TEXT            same seed, same cluster and churn draws (default accuracy)
  --postgres-url URL     database for the postgres store (default postgres://postgres@127.0.0.1:5432/test)
  --dra                  GPUs allocated through NVIDIA's DRA driver: ResourceSlices and kubelet-plugin
                         pods instead of device-plugin pods, the services with DISCOVERY=dra
  --clusters N           a fleet instead (N >= 2): N simulated clusters of --nodes each sharing one board
                         exchange, a leaf nats-server each and a hub nats-server, a service per cluster
                         (inventory in its leaf's bucket) and the hub's service (receiver nats, processor
                         fleet); the hub's cross-cluster moves compared with the clusters' ledgers, one
                         JSON line (--stores, --dra and --postgres-url do not apply)
  --cross-cluster-swaps N
                         with --clusters: boards each cluster swaps with another a minute (default 6)
  --output DIR           keep the ledger, each scenario's records and each service's logs there
  --help                 this text
`

/** Changes per minute across the cluster while churn lasts. */
const churn: ChurnRates = {
  podRestartsPerMinute: 20,
  nodeJoinsPerMinute: 4,
  nodeLeavesPerMinute: 4,
  gpuSwapsPerMinute: 12,
  readinessFlapsPerMinute: 20,
}

/**
 * Fault probabilities (per request, exec, or open watch and second), driver failures, and the share of
 * healthy GPUs per minute that turn degraded or failed, while churn lasts.
 */
const faults: Partial<FaultRates> = {
  serverError: 0.01,
  throttle: 0.01,
  watchDropPerSecond: 0.01,
  execHang: 0.005,
  execNonZeroExit: 0.01,
  execTruncated: 0.01,
  execGarbage: 0.01,
  driverFailuresPerMinute: 3,
  driverFailureSeconds: 20,
  healthFaultsPerGpuMinute: 0.02,
}

class UsageError extends Error {}

const options = () => {
  const textFlags = [
    "nodes",
    "churn",
    "stores",
    "removal-grace",
    "resync",
    "timeout",
    "qps",
    "seed",
    "postgres-url",
    "clusters",
    "cross-cluster-swaps",
  ]
  const values: Record<string, string | boolean | undefined> = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      help: { type: "boolean" },
      dra: { type: "boolean" },
      ...Object.fromEntries([...textFlags, "output"].map((flag) => [flag, { type: "string" as const }])),
    },
  }).values
  if (values.help === true) return undefined
  const text = (flag: string): string | undefined => {
    const value = values[flag]
    return typeof value === "string" ? value : undefined
  }
  const duration = (flag: string, fallback: number): number => {
    const value = text(flag)
    if (value === undefined) return fallback
    const parsed = parseGoDuration(value)
    if (Result.isFailure(parsed)) throw new UsageError(`--${flag}: ${parsed.failure}`)
    return parsed.success
  }
  const positive = (flag: string, fallback: number): number => {
    const value = text(flag)
    if (value === undefined) return fallback
    const parsed = Number(value)
    if (!Number.isFinite(parsed) || parsed <= 0) throw new UsageError(`--${flag}: "${value}" is not a positive number`)
    return parsed
  }
  const stores = (text("stores")?.split(",") ?? [...storeNames]).map((name) => name.trim())
  for (const name of stores)
    if (!(storeNames as ReadonlyArray<string>).includes(name))
      throw new UsageError(`--stores: unknown store "${name}"; known: ${storeNames.join(", ")}`)
  const output = text("output")
  const clusters = text("clusters") === undefined ? undefined : positive("clusters", 2)
  if (clusters !== undefined && (!Number.isInteger(clusters) || clusters < 2))
    throw new UsageError(`--clusters: "${text("clusters")}" is not a whole number of 2 or more`)
  if (clusters === undefined && text("cross-cluster-swaps") !== undefined)
    throw new UsageError("--cross-cluster-swaps: only with --clusters")
  return {
    ...(clusters === undefined ? {} : { clusters }),
    crossClusterSwapsPerMinute: positive("cross-cluster-swaps", 6),
    nodes: Math.round(positive("nodes", 300)),
    churnMs: duration("churn", 120_000),
    stores: stores as ReadonlyArray<StoreName>,
    removalGraceMs: duration("removal-grace", 30_000),
    resyncMs: duration("resync", 20_000),
    timeoutMs: duration("timeout", 5_000),
    qps: positive("qps", 50),
    seed: text("seed") ?? "accuracy",
    dra: values.dra === true,
    postgresUrl: text("postgres-url") ?? "postgres://postgres@127.0.0.1:5432/test",
    ...(output === undefined ? {} : { outputDir: output }),
  }
}

const main = async (): Promise<number> => {
  let chosen: ReturnType<typeof options>
  try {
    chosen = options()
  } catch (error) {
    process.stderr.write(`accuracy: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`)
    return 2
  }
  if (chosen === undefined) {
    process.stdout.write(usage)
    return 0
  }
  if (chosen.clusters !== undefined) return fleet({ ...chosen, clusters: chosen.clusters })
  const outcome = await runAccuracy({
    ...chosen,
    churn,
    faults,
    cli: fileURLToPath(new URL("../dist/bin/gpu-serials.js", import.meta.url)),
    cwd: fileURLToPath(new URL("../", import.meta.url)),
    progress: (line) => process.stderr.write(`${line}\n`),
  })
  for (const scenario of outcome.scenarios) process.stdout.write(`${JSON.stringify(scenarioLine(scenario))}\n`)
  process.stderr.write(
    `accuracy: initial sync ${outcome.syncSeconds.toFixed(1)} s, waited ${outcome.waitedSeconds.toFixed(1)} s after churn, ` +
      `${outcome.wallSeconds.toFixed(0)} s in all\n`,
  )
  process.stdout.write(
    `${JSON.stringify({ ...totalsOf(outcome.scenarios), skipped: outcome.skipped, wall_s: Math.round(outcome.wallSeconds) })}\n`,
  )
  return outcome.scenarios.some((scenario) => scenario.failure !== undefined) ? 1 : 0
}

/** `--clusters N`: the hub's cross-cluster moves against the clusters' ledgers, one JSON line. */
const fleet = async (chosen: NonNullable<ReturnType<typeof options>> & { readonly clusters: number }) => {
  const outcome = await runFleetAccuracy({
    clusters: chosen.clusters,
    nodes: chosen.nodes,
    seed: chosen.seed,
    churnMs: chosen.churnMs,
    churn,
    crossClusterSwapsPerMinute: chosen.crossClusterSwapsPerMinute,
    faults,
    removalGraceMs: chosen.removalGraceMs,
    resyncMs: chosen.resyncMs,
    timeoutMs: chosen.timeoutMs,
    qps: chosen.qps,
    ...(chosen.outputDir === undefined ? {} : { outputDir: chosen.outputDir }),
    cli: fileURLToPath(new URL("../dist/bin/gpu-serials.js", import.meta.url)),
    cwd: fileURLToPath(new URL("../", import.meta.url)),
    progress: (line) => process.stderr.write(`${line}\n`),
  })
  const { disagreements, ...figures } = outcome.report
  process.stderr.write(
    `accuracy: the hub held every GPU after ${outcome.syncSeconds.toFixed(1)} s, waited ${outcome.waitedSeconds.toFixed(1)} s after churn, ` +
      `${outcome.wallSeconds.toFixed(0)} s in all\n`,
  )
  process.stdout.write(
    `${JSON.stringify({
      ...figures,
      boards_swapped: outcome.boardsSwapped,
      failures: outcome.failures,
      disagreements: disagreements.slice(0, 20),
      wall_s: Math.round(outcome.wallSeconds),
    })}\n`,
  )
  return outcome.failures.length > 0 ? 1 : 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`accuracy: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  },
)
