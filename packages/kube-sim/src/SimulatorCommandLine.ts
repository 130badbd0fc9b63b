import { parseArgs } from "node:util"
import type { ResourceApiVersion } from "./api/ResourceKind.ts"
import type { ModelMix } from "./catalog/Fleet.ts"
import { type FleetModelName, fleetModelNames } from "./catalog/GpuModel.ts"
import type { ChurnRates } from "./cluster/Churn.ts"
import { parseDurationMs, parseLatency } from "./exec/ExecLatency.ts"
import type { FaultRates } from "./faults/FaultPlan.ts"
import type { SimulatedClusterOptions } from "./SimulatedClusterOptions.ts"

export const simulatorUsage = `Usage: npm run sim -- [flags]

Starts a simulated Kubernetes cluster of GPU nodes on 127.0.0.1, writes its kubeconfig and prints
{"url", "kubeconfigPath", ...} as one JSON line on stdout. Stops cleanly on SIGTERM or SIGINT.

  --nodes N                   GPU nodes (default 12)
  --dra                       run NVIDIA's DRA driver (ResourceSlices, kubelet-plugin pods) instead of the device plugin
  --dra-api-versions V,...    resource.k8s.io versions served with --dra: v1, v1beta2, v1beta1 (default all)
  --seed TEXT                 same seed, same cluster (default gpu-serials)
  --model-mix M=W,...         weights of ${fleetModelNames.join(", ")}
  --exec-latency L            nvidia-smi run time: 200ms | 100ms-300ms | p50=150ms,p99=600ms
  --port N                    port on 127.0.0.1, 0 for any (default 0)
  --insecure-http             serve plain HTTP instead of HTTPS (default HTTPS, its CA in the kubeconfig)
  --kubeconfig PATH           where to write the kubeconfig (default a temporary file)
  --namespace NS              device-plugin namespace (default gpu-operator; nvidia-dra-driver-gpu with --dra)
  --cluster-name NAME         name in the kubeconfig (default gpu-sim)
  --token TEXT                bearer token of the kubeconfig user (default random)
  --bookmark-interval D       watch bookmark interval (default 10s)
  --watch-timeout D           server-side watch lifetime (default 30-60m)
  --history N                 watch events kept for resuming watches (default 10000)
  --ledger PATH               write the ground-truth ledger there, one JSON entry per line
  --fault-server-error P      probability of 500/503 per request
  --fault-throttle P          probability of 429 per request
  --fault-watch-drop P        probability per open watch per second of a connection reset
  --fault-exec-hang P         probability per exec of no answer
  --fault-exec-exit P         probability per exec of a non-zero exit
  --fault-exec-truncate P     probability per exec of truncated output
  --fault-exec-garbage P      probability per exec of garbage output
  --fault-driver-failures R   drivers failing per minute, each on a healthy node
  --fault-driver-failure-time D  how long such a driver stays broken (default 20s)
  --fault-health R            share of healthy GPUs per minute that turn degraded or failed (0 to 1)
  --fault-health-stage-time D least time each step of such a fault lasts (default 20s)
  --fault-dra-mismatch P      probability per ResourceSlice write that it misses a GPU or keeps one that left
  --churn-pod-restarts R      device-plugin pod restarts per minute
  --churn-node-joins R        node joins per minute
  --churn-node-leaves R       node removals per minute
  --churn-gpu-swaps R         GPU swaps between nodes per minute
  --churn-readiness-flaps R   pods briefly not ready, per minute
  --help                      this text
`

/** A command-line mistake, reported with the flag that caused it. */
export class CommandLineError extends Error {
  override readonly name = "CommandLineError"
}

export type SimulatorCommand =
  | { readonly help: true }
  | { readonly help: false; readonly options: SimulatedClusterOptions }

const numberFlags = [
  "nodes",
  "port",
  "history",
  "fault-server-error",
  "fault-throttle",
  "fault-watch-drop",
  "fault-exec-hang",
  "fault-exec-exit",
  "fault-exec-truncate",
  "fault-exec-garbage",
  "fault-driver-failures",
  "fault-health",
  "fault-dra-mismatch",
  "churn-pod-restarts",
  "churn-node-joins",
  "churn-node-leaves",
  "churn-gpu-swaps",
  "churn-readiness-flaps",
] as const

const textFlags = [
  "seed",
  "model-mix",
  "exec-latency",
  "kubeconfig",
  "namespace",
  "cluster-name",
  "token",
  "bookmark-interval",
  "watch-timeout",
  "fault-driver-failure-time",
  "fault-health-stage-time",
  "ledger",
  "dra-api-versions",
] as const

export const parseSimulatorCommand = (argv: ReadonlyArray<string>): SimulatorCommand => {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean" },
        dra: { type: "boolean" },
        "insecure-http": { type: "boolean" },
        ...Object.fromEntries([...numberFlags, ...textFlags].map((flag) => [flag, { type: "string" as const }])),
      },
    }).values
  } catch (error) {
    throw new CommandLineError(error instanceof Error ? error.message : String(error))
  }
  if (values.help === true) return { help: true }
  const text = (flag: string): string | undefined => {
    const value = values[flag]
    return typeof value === "string" ? value : undefined
  }
  const number = (flag: string): number | undefined => {
    const value = text(flag)
    if (value === undefined) return undefined
    const parsed = Number(value)
    if (value.trim() === "" || !Number.isFinite(parsed) || parsed < 0)
      throw new CommandLineError(`--${flag}: "${value}" is not a non-negative number`)
    return parsed
  }
  const duration = (flag: string): number | undefined => {
    const value = text(flag)
    if (value === undefined) return undefined
    try {
      return parseDurationMs(value)
    } catch (error) {
      throw new CommandLineError(`--${flag}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const faults: Partial<Record<keyof FaultRates, number>> = {}
  const setFault = (flag: string, key: keyof FaultRates) => {
    const value = number(flag)
    if (value === undefined) return
    if (value > 1) throw new CommandLineError(`--${flag}: a probability is between 0 and 1`)
    faults[key] = value
  }
  setFault("fault-server-error", "serverError")
  setFault("fault-throttle", "throttle")
  setFault("fault-watch-drop", "watchDropPerSecond")
  setFault("fault-exec-hang", "execHang")
  setFault("fault-exec-exit", "execNonZeroExit")
  setFault("fault-exec-truncate", "execTruncated")
  setFault("fault-exec-garbage", "execGarbage")
  const driverFailures = number("fault-driver-failures")
  if (driverFailures !== undefined) faults.driverFailuresPerMinute = driverFailures
  const driverFailureTime = duration("fault-driver-failure-time")
  if (driverFailureTime !== undefined) faults.driverFailureSeconds = driverFailureTime / 1000
  setFault("fault-health", "healthFaultsPerGpuMinute")
  const healthStageTime = duration("fault-health-stage-time")
  if (healthStageTime !== undefined) faults.healthStageSeconds = healthStageTime / 1000
  setFault("fault-dra-mismatch", "draMismatch")
  const churn: Partial<Record<keyof ChurnRates, number>> = {}
  const setChurn = (flag: string, key: keyof ChurnRates) => {
    const value = number(flag)
    if (value !== undefined) churn[key] = value
  }
  setChurn("churn-pod-restarts", "podRestartsPerMinute")
  setChurn("churn-node-joins", "nodeJoinsPerMinute")
  setChurn("churn-node-leaves", "nodeLeavesPerMinute")
  setChurn("churn-gpu-swaps", "gpuSwapsPerMinute")
  setChurn("churn-readiness-flaps", "readinessFlapsPerMinute")

  const options: Record<string, unknown> = {
    dra: values.dra === true ? true : undefined,
    insecureHttp: values["insecure-http"] === true ? true : undefined,
    draApiVersions: draApiVersionsOf(text("dra-api-versions")),
    nodes: number("nodes"),
    port: number("port"),
    historyLimit: number("history"),
    seed: text("seed"),
    modelMix: modelMixOf(text("model-mix")),
    execLatency: latencyOf(text("exec-latency")),
    kubeconfigPath: text("kubeconfig"),
    namespace: text("namespace"),
    clusterName: text("cluster-name"),
    token: text("token"),
    bookmarkIntervalMs: duration("bookmark-interval"),
    watchTimeoutSeconds: secondsOf(duration("watch-timeout")),
    ledgerPath: text("ledger"),
    faults: Object.keys(faults).length > 0 ? faults : undefined,
    churn: Object.keys(churn).length > 0 ? churn : undefined,
  }
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
  return { help: false, options: defined as SimulatedClusterOptions }
}

const draApiVersionsOf = (value: string | undefined): ReadonlyArray<ResourceApiVersion> | undefined => {
  if (value === undefined) return undefined
  const known: ReadonlyArray<string> = ["v1", "v1beta2", "v1beta1"]
  const versions = value.split(",").map((version) => version.trim())
  for (const version of versions)
    if (!known.includes(version))
      throw new CommandLineError(`--dra-api-versions: unknown version "${version}"; known: ${known.join(", ")}`)
  return versions as ReadonlyArray<ResourceApiVersion>
}

const secondsOf = (milliseconds: number | undefined): number | undefined =>
  milliseconds === undefined ? undefined : Math.max(1, Math.round(milliseconds / 1000))

const latencyOf = (value: string | undefined) => {
  if (value === undefined) return undefined
  try {
    return parseLatency(value)
  } catch (error) {
    throw new CommandLineError(`--exec-latency: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const modelMixOf = (value: string | undefined): ModelMix | undefined => {
  if (value === undefined) return undefined
  const mix: Partial<Record<FleetModelName, number>> = {}
  for (const part of value.split(",")) {
    const [name = "", weight = ""] = part.split("=").map((piece) => piece.trim())
    if (!(fleetModelNames as ReadonlyArray<string>).includes(name))
      throw new CommandLineError(`--model-mix: unknown model "${name}"; known: ${fleetModelNames.join(", ")}`)
    const parsed = Number(weight)
    if (weight === "" || !Number.isFinite(parsed) || parsed < 0)
      throw new CommandLineError(`--model-mix: weight of ${name} must be a non-negative number`)
    mix[name as FleetModelName] = parsed
  }
  return mix
}
