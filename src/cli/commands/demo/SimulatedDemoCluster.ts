import type { BoardExchange } from "@gpu-serials/kube-sim"
import * as Effect from "effect/Effect"
import { defectMessage } from "../../../log/ShortMessage.ts"
import type { DemoSettings } from "./DemoSettings.ts"

/** The least time each step of a demo's health fault lasts: a resync and a reading see it. */
const demoHealthStageSeconds = 8

/**
 * The simulated cluster is a development package: loaded on demand so that the production image, installed
 * without development dependencies, runs every other command without it.
 */
const loadSimulator = () => import("@gpu-serials/kube-sim")

export type Simulator = Awaited<ReturnType<typeof loadSimulator>>
export type SimulatedCluster = Awaited<ReturnType<Simulator["startSimulatedCluster"]>>

/** Node's failure to find the simulator package itself, not a module missing inside it. */
const isSimulatorMissing = (cause: unknown): boolean =>
  cause instanceof Error &&
  "code" in cause &&
  cause.code === "ERR_MODULE_NOT_FOUND" &&
  cause.message.includes("'@gpu-serials/kube-sim'")

/** Fails with the line that tells the user why there is no simulated cluster. */
export const importSimulator = Effect.tryPromise({
  try: loadSimulator,
  catch: (cause) =>
    isSimulatorMissing(cause)
      ? "gpu-serials demo: the simulated cluster is not installed in this build; run the demo from a source checkout after `npm ci`\n"
      : `gpu-serials demo: the simulated cluster could not be loaded: ${defectMessage(cause)}\n`,
})

/**
 * A simulated cluster of the demo, closed with the scope: the nodes, faults and churn the settings give,
 * named `name`; in a fleet, its seed of its own and the board exchange it swaps boards through.
 */
export const startDemoCluster = (
  simulator: Simulator,
  settings: DemoSettings,
  cluster: {
    readonly name: string
    readonly seed: string
    readonly exchange?: BoardExchange
  } = { name: "demo", seed: settings.seed },
) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        simulator.startSimulatedCluster({
          nodes: settings.nodes,
          seed: cluster.seed,
          clusterName: cluster.name,
          ...(cluster.exchange === undefined ? {} : { exchange: cluster.exchange }),
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
            ...(cluster.exchange === undefined ? {} : { crossClusterSwapsPerMinute: settings.crossClusterSwaps }),
          },
        }),
      catch: defectMessage,
    }),
    (cluster: SimulatedCluster) => Effect.promise(() => cluster.close()),
  )
