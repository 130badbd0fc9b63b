import type { ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  clientPortLine,
  isReady,
  launchNatsServer,
  leafPortLine,
  type NatsServerProcess,
  natsServerExecutable,
  portIn,
  natsServerConfig as serverConfig,
  stopNatsServer as terminate,
} from "../../src/cli/commands/demo/NatsServerProcess.ts"

/**
 * The NATS layout of a fleet, on loopback: a hub nats-server with JetStream (domain `hub`) and a leaf-node
 * port, and one leaf nats-server per cluster with JetStream `domain: <cluster>` and a remote to the hub.
 * Every server keeps its ports and store across restarts, so a stopped hub comes back where its leaves and
 * clients expect it.
 */
export interface NatsTopology {
  readonly hub: TopologyServer
  /** The leaves by cluster name (= JetStream domain). */
  readonly leaves: ReadonlyMap<string, LeafServer>
  /** The leaf of `cluster`; throws for a cluster the topology has not. */
  readonly leaf: (cluster: string) => LeafServer
  /** Stops every server and removes their stores. */
  readonly dispose: () => Promise<void>
}

export interface TopologyServer {
  readonly name: string
  /** The client URL, the same across restarts. */
  readonly url: string
  readonly port: number
  readonly domain: string
  /** Stops the server (SIGTERM) and waits for it to exit; its store stays. */
  readonly stop: () => Promise<void>
  /** Starts the server again on the same ports, store and config. */
  readonly start: () => Promise<void>
}

export interface LeafServer extends TopologyServer {
  /** Restarts the leaf without its remote: it keeps serving its cluster and its JetStream, the hub cannot reach it. */
  readonly cut: () => Promise<void>
  /** Restarts the leaf with its remote to the hub again. */
  readonly link: () => Promise<void>
  /** Whether the leaf runs with its remote to the hub. */
  readonly linked: () => boolean
}

/** The hub's JetStream domain: the clusters' domains are their names, which must differ from it. */
export const hubDomain = "hub"

/** The nats-server of the PATH or /usr/sbin, as the demo finds it. */
const executable = natsServerExecutable(process.env.PATH) ?? "nats-server"

const launch = (configFile: string, ready: (log: string) => boolean): Promise<NatsServerProcess> =>
  launchNatsServer(executable, configFile, ready)

/**
 * Starts a hub and one leaf per cluster, each leaf linked to the hub. The leaves retry their remote every
 * second, so a link comes back within about a second of the hub's return.
 */
export const startNatsTopology = async (clusters: ReadonlyArray<string>): Promise<NatsTopology> => {
  if (clusters.includes(hubDomain)) throw new Error(`a cluster may not be named ${hubDomain}`)
  const root = mkdtempSync(join(tmpdir(), "gpu-serials-topology-"))
  const started: Array<() => ChildProcess | undefined> = []

  const hubDir = join(root, "hub")
  mkdirSync(hubDir)
  const hubConfigFile = join(hubDir, "nats-server.conf")
  const hubConfig = (port: number, leafPort: number) =>
    serverConfig({
      name: "hub",
      port,
      storeDir: join(hubDir, "store"),
      domain: hubDomain,
      leafnodes: `leafnodes { listen: "127.0.0.1:${leafPort}" }`,
    })
  writeFileSync(hubConfigFile, hubConfig(-1, -1))
  let hubProcess: NatsServerProcess | undefined = await launch(
    hubConfigFile,
    (log) => isReady(log) && leafPortLine.test(log) && clientPortLine.test(log),
  )
  const hubPort = portIn(hubProcess.log(), clientPortLine)
  const hubLeafPort = portIn(hubProcess.log(), leafPortLine)
  // From now on the hub comes back on the ports it was given.
  writeFileSync(hubConfigFile, hubConfig(hubPort, hubLeafPort))
  started.push(() => hubProcess?.process)

  const hub: TopologyServer = {
    name: "hub",
    url: `nats://127.0.0.1:${hubPort}`,
    port: hubPort,
    domain: hubDomain,
    stop: async () => {
      if (hubProcess !== undefined) await terminate(hubProcess.process)
      hubProcess = undefined
    },
    start: async () => {
      if (hubProcess !== undefined) return
      hubProcess = await launch(hubConfigFile, isReady)
    },
  }

  const startLeaf = async (cluster: string): Promise<LeafServer> => {
    const dir = join(root, `leaf-${cluster}`)
    mkdirSync(dir)
    const configFile = join(dir, "nats-server.conf")
    const leafConfig = (port: number, remote: boolean) =>
      serverConfig({
        name: `leaf-${cluster}`,
        port,
        storeDir: join(dir, "store"),
        domain: cluster,
        leafnodes: remote
          ? `leafnodes { reconnect: 1, remotes [ { url: "nats-leaf://127.0.0.1:${hubLeafPort}" } ] }`
          : "",
      })
    writeFileSync(configFile, leafConfig(-1, true))
    let current: NatsServerProcess | undefined = await launch(
      configFile,
      (log) => isReady(log) && clientPortLine.test(log),
    )
    const port = portIn(current.log(), clientPortLine)
    let remote = true
    writeFileSync(configFile, leafConfig(port, remote))
    started.push(() => current?.process)
    const stop = async () => {
      if (current !== undefined) await terminate(current.process)
      current = undefined
    }
    const start = async () => {
      if (current !== undefined) return
      current = await launch(configFile, isReady)
    }
    const restartWith = async (linked: boolean) => {
      await stop()
      remote = linked
      writeFileSync(configFile, leafConfig(port, remote))
      await start()
    }
    return {
      name: `leaf-${cluster}`,
      url: `nats://127.0.0.1:${port}`,
      port,
      domain: cluster,
      stop,
      start,
      cut: () => restartWith(false),
      link: () => restartWith(true),
      linked: () => remote,
    }
  }

  const leaves = new Map<string, LeafServer>()
  try {
    for (const cluster of clusters) leaves.set(cluster, await startLeaf(cluster))
  } catch (error) {
    await Promise.all(started.map((current) => current()).map((child) => child && terminate(child)))
    rmSync(root, { recursive: true, force: true })
    throw error
  }

  return {
    hub,
    leaves,
    leaf: (cluster) => {
      const found = leaves.get(cluster)
      if (found === undefined) throw new Error(`no leaf for cluster ${cluster}`)
      return found
    },
    dispose: async () => {
      await Promise.all(
        started.map((current) => current()).map((child) => (child === undefined ? undefined : terminate(child))),
      )
      rmSync(root, { recursive: true, force: true })
    },
  }
}
