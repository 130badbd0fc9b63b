import type { ResourceApiVersion } from "./api/ResourceKind.ts"
import type { ModelMix } from "./catalog/Fleet.ts"
import type { ChurnRates } from "./cluster/Churn.ts"
import type { PodTimings } from "./cluster/DevicePluginDaemonSet.ts"
import type { BoardExchange } from "./exchange/BoardExchange.ts"
import type { ExecLatency } from "./exec/ExecLatency.ts"
import type { FaultRates } from "./faults/FaultPlan.ts"

/** Knobs of the simulated cluster. Every field has a default; an empty object gives a small, calm cluster. */
export interface SimulatedClusterOptions {
  /**
   * Runs NVIDIA's DRA driver (Helm chart `nvidia-dra-driver-gpu` v25.12.0) instead of the device plugin:
   * the API serves `resource.k8s.io/v1` and reports Kubernetes 1.34, each GPU node has a kubelet-plugin
   * pod (namespace `nvidia-dra-driver-gpu`, container `gpus`) and one ResourceSlice of driver
   * `gpu.nvidia.com`. Default false.
   */
  readonly dra?: boolean
  /**
   * With `dra`, the `resource.k8s.io` versions served (the API server converts between them); the
   * reported release follows the newest: 1.34 with `v1`, 1.33 with `v1beta2`, else 1.32. Default all three.
   */
  readonly draApiVersions?: ReadonlyArray<ResourceApiVersion>
  /** Number of GPU nodes, each with one device-plugin pod. Default 12. */
  readonly nodes?: number
  /** Relative weights of GPU models (`h100-hgx`, `gb200-nvl72`, `a100-mig`, `t4`, `l40s`, `rtx4090`, `broken-driver`). */
  readonly modelMix?: ModelMix
  /** Same seed, same cluster: node names, provider ids, serials, UUIDs. Default `gpu-serials`. */
  readonly seed?: string | number
  readonly clusterName?: string
  /** TCP port on 127.0.0.1; 0 picks a free one. Default 0. */
  readonly port?: number
  /**
   * Serves plain HTTP instead of HTTPS. By default the API server speaks TLS with a CA and serving
   * certificate (127.0.0.1, localhost) made at start, and the kubeconfig carries the CA. Default false.
   */
  readonly insecureHttp?: boolean
  /** Where to write the kubeconfig; default a new temporary directory. */
  readonly kubeconfigPath?: string
  /** Bearer token of the kubeconfig user; default a random one. */
  readonly token?: string
  /** Namespace of the device-plugin DaemonSet. Default `gpu-operator` (`nvidia-dra-driver-gpu` with `dra`). */
  readonly namespace?: string
  /** Other namespaces that exist (leases of the service live in one). Default `gpu-serials`. */
  readonly extraNamespaces?: ReadonlyArray<string>
  /** Labels of the device-plugin pods. Default `app=nvidia-device-plugin-daemonset` (the chart's three with `dra`). */
  readonly podLabels?: Readonly<Record<string, string>>
  /** The container that has nvidia-smi. Default `nvidia-device-plugin` (`gpus` with `dra`). */
  readonly container?: string
  /** nvidia-smi run time; a number is fixed milliseconds. Default log-normal, p50 150 ms, p99 600 ms. */
  readonly execLatency?: ExecLatency | number
  /**
   * Time the container runtime takes to start a process, or to find it cannot, before the program
   * runs. A client that creates its streams after the upgrade (kubectl) discards frames that come
   * sooner, so a real runtime's start time matters to it. Default 0.
   */
  readonly processStartMs?: number
  readonly faults?: Partial<FaultRates>
  readonly churn?: Partial<ChurnRates>
  readonly podTimings?: Partial<PodTimings>
  /** Interval of watch BOOKMARK events for watches that allow them. Default 10 s. */
  readonly bookmarkIntervalMs?: number
  /** Committed events kept for watches resuming from a resourceVersion. Default 10,000. */
  readonly historyLimit?: number
  /** Server-side lifetime of a watch without `timeoutSeconds`; default 30 to 60 minutes, drawn per watch. */
  readonly watchTimeoutSeconds?: number
  /**
   * Boards shared with the other clusters started with the same exchange: at `churn.crossClusterSwapsPerMinute`
   * a board of this cluster trades places with one of another cluster, and both ledgers record it. Each
   * cluster needs its own `clusterName` and `seed`.
   */
  readonly exchange?: BoardExchange
  /** A file the ground-truth ledger is written to, one JSON entry per line, as changes happen; none unless given. */
  readonly ledgerPath?: string
}

export const defaultExecLatency: ExecLatency = { kind: "lognormal", p50Ms: 150, p99Ms: 600 }
export const defaultPodTimings: PodTimings = { startMs: 300, readyMs: 700, terminationMs: 300 }
