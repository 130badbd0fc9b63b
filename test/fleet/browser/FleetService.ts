import { type SimulatedCluster, startSimulatedCluster } from "@gpu-serials/kube-sim"
import { freePort } from "../../../src/health/FreePort.ts"
import { type RunningCli, startGpuSerials } from "../../cli/GpuSerialsCli.ts"

/** A running gpu-serials whose health server serves the fleet page and API on 127.0.0.1. */
export interface FleetService {
  /** `http://127.0.0.1:<port>`: the page's origin. */
  readonly origin: string
  readonly cli: RunningCli
  /** The simulated cluster it reads, when the test owns it (the `run` mode); undefined for `gpu-serials demo`. */
  readonly cluster: SimulatedCluster | undefined
  /** GET of a path under the origin, with the token when one is set; the body parsed as JSON. */
  readonly api: <T>(path: string) => Promise<{ readonly status: number; readonly body: T }>
  readonly close: () => Promise<void>
}

export interface GpuItem {
  readonly uuid: string
  readonly gpu: string
  readonly node: string
  readonly machine: string
  readonly chassis: string
  readonly product?: string
  readonly pciBusId?: string
  readonly moduleId?: number
  readonly index: number
  readonly health?: { readonly state: string }
}

export interface GpuList {
  readonly items: ReadonlyArray<GpuItem>
  readonly total: number
}

export interface FleetStatus {
  readonly gpus: number
  readonly nodes: number
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `condition` holds, failing with `what` after `timeoutMs`. */
export const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(100)
  }
}

const apiOf =
  (origin: string, token: string | undefined) =>
  async <T>(path: string): Promise<{ readonly status: number; readonly body: T }> => {
    const response = await fetch(`${origin}${path}`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    })
    const text = await response.text()
    return { status: response.status, body: (text === "" ? undefined : JSON.parse(text)) as T }
  }

const stop = async (cli: RunningCli) => {
  if (cli.child.exitCode === null && cli.child.signalCode === null) {
    cli.child.kill("SIGTERM")
    const stopped = await Promise.race([cli.exited.then(() => true), sleep(10_000).then(() => false)])
    if (!stopped) {
      cli.child.kill("SIGKILL")
      await cli.exited
    }
  }
}

/** Waits until the API reports at least `gpus` GPUs (every GPU of the cluster read once). */
const untilRead = async (service: FleetService, gpus: number, timeoutMs: number) => {
  await until(
    `the fleet API reports ${gpus} GPUs`,
    async () => {
      try {
        const status = await service.api<FleetStatus>("/api/v1/status")
        return status.status === 200 && status.body.gpus >= gpus
      } catch {
        return false
      }
    },
    timeoutMs,
  )
}

/** Waits until the API reports GPUs and their count held for two seconds (every node of the demo read). */
const untilSettled = async (service: FleetService, timeoutMs: number) => {
  let last = -1
  let since = Date.now()
  await until(
    "the fleet API's GPU count settles",
    async () => {
      const gpus = await service
        .api<FleetStatus>("/api/v1/status")
        .then((answer) => (answer.status === 200 ? answer.body.gpus : 0))
        .catch(() => 0)
      if (gpus !== last) {
        last = gpus
        since = Date.now()
      }
      return gpus > 0 && Date.now() - since >= 2000
    },
    timeoutMs,
  )
}

export interface SimulatedFleetOptions {
  readonly nodes?: number
  readonly seed?: string
  readonly env?: Readonly<Record<string, string>>
  readonly token?: string
}

/**
 * A simulated cluster in this process (so the test can swap GPUs and break boards) and the compiled
 * `gpu-serials run` reading it, its health server on a free port of 127.0.0.1. Resolves once every GPU
 * of the cluster is in the API.
 */
export const startSimulatedFleet = async (options: SimulatedFleetOptions = {}): Promise<FleetService> => {
  const cluster = await startSimulatedCluster({
    nodes: options.nodes ?? 5,
    modelMix: { "h100-hgx": 2, "gb200-nvl72": 2, t4: 1 },
    seed: options.seed ?? "fleet-page",
    execLatency: 20,
    podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
  })
  const port = await freePort()
  const cli = startGpuSerials(["run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(port)], {
    CLUSTER_NAME: "demo",
    SERVER_ADDRESS: "127.0.0.1",
    RESYNC: "1s",
    SHUTDOWN_TIMEOUT: "5s",
    LOG_LEVEL: "warn",
    ...(options.token === undefined ? {} : { FLEET_TOKEN: options.token }),
    ...options.env,
  })
  const origin = `http://127.0.0.1:${port}`
  const service: FleetService = {
    origin,
    cli,
    cluster,
    api: apiOf(origin, options.token),
    close: async () => {
      await stop(cli)
      await cluster.close()
    },
  }
  try {
    const gpus = cluster.nodeNames().reduce((sum, name) => sum + (cluster.node(name)?.gpus.length ?? 0), 0)
    await Promise.race([
      untilRead(service, gpus, 60_000),
      cli.exited.then(() => {
        throw new Error(`gpu-serials exited before serving the fleet:\n${cli.stderr()}`)
      }),
    ])
  } catch (error) {
    await service.close()
    throw error
  }
  return service
}

/**
 * `gpu-serials demo` as a user runs it (by default its fleet of 8 nodes: NVL72 trays, HGX, MIG, a broken
 * driver; `args` adds flags such as `--nodes`), until stopped, its health server on a free port of
 * 127.0.0.1. Resolves once the API's GPU count has settled.
 */
export const startDemo = async (
  args: ReadonlyArray<string> = [],
  options: { readonly timeoutMs?: number } = {},
): Promise<FleetService> => {
  const port = await freePort()
  const cli = startGpuSerials(
    ["demo", "--duration", "0", "--server-address", "127.0.0.1", "--server-port", String(port), ...args],
    {},
  )
  const origin = `http://127.0.0.1:${port}`
  const service: FleetService = {
    origin,
    cli,
    cluster: undefined,
    api: apiOf(origin, undefined),
    close: () => stop(cli),
  }
  try {
    await Promise.race([
      untilSettled(service, options.timeoutMs ?? 60_000),
      cli.exited.then(() => {
        throw new Error(`gpu-serials demo exited before serving the fleet:\n${cli.stderr()}`)
      }),
    ])
  } catch (error) {
    await service.close()
    throw error
  }
  return service
}
