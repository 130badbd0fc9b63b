import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  clientPortLine,
  isReady,
  launchNatsServer,
  leafPortLine,
  type NatsServerProcess,
  natsServerConfig,
  portIn,
  stopNatsServer,
} from "./NatsServerProcess.ts"

/**
 * The fleet demo's NATS, on loopback at ports the servers choose: a hub nats-server with JetStream
 * (domain `hub`) and a leaf-node port, and one leaf nats-server per cluster with JetStream `domain:
 * <cluster>` and a remote to the hub, as docs/hub.md lays a fleet out. The stores live in a temporary
 * folder removed on close.
 */
export interface DemoNatsTopology {
  readonly hubUrl: string
  /** The client URL of each cluster's leaf, by cluster name. */
  readonly leafUrls: ReadonlyMap<string, string>
  /** Stops every server and removes their stores. */
  readonly close: () => Promise<void>
}

/** The hub's JetStream domain: the clusters' domains are their names, which must differ from it. */
export const demoHubDomain = "hub"

export const startDemoNatsTopology = async (
  executable: string,
  clusters: ReadonlyArray<string>,
): Promise<DemoNatsTopology> => {
  const root = mkdtempSync(join(tmpdir(), "gpu-serials-demo-nats-"))
  const started: Array<NatsServerProcess> = []
  const close = async () => {
    await Promise.all(started.map((server) => stopNatsServer(server.process)))
    rmSync(root, { recursive: true, force: true })
  }
  const startServer = async (name: string, domain: string, leafnodes: string, ready: (log: string) => boolean) => {
    const dir = join(root, name)
    mkdirSync(dir)
    const configFile = join(dir, "nats-server.conf")
    writeFileSync(configFile, natsServerConfig({ name, port: -1, storeDir: join(dir, "store"), domain, leafnodes }))
    const server = await launchNatsServer(executable, configFile, (log) => isReady(log) && ready(log))
    started.push(server)
    return server
  }
  try {
    const hub = await startServer("hub", demoHubDomain, `leafnodes { listen: "127.0.0.1:-1" }`, (log) =>
      [clientPortLine, leafPortLine].every((line) => line.test(log)),
    )
    const hubLeafPort = portIn(hub.log(), leafPortLine)
    const leafUrls = new Map<string, string>()
    for (const cluster of clusters) {
      const leaf = await startServer(
        `leaf-${cluster}`,
        cluster,
        `leafnodes { reconnect: 1, remotes [ { url: "nats-leaf://127.0.0.1:${hubLeafPort}" } ] }`,
        (log) => clientPortLine.test(log),
      )
      leafUrls.set(cluster, `nats://127.0.0.1:${portIn(leaf.log(), clientPortLine)}`)
    }
    return { hubUrl: `nats://127.0.0.1:${portIn(hub.log(), clientPortLine)}`, leafUrls, close }
  } catch (error) {
    await close()
    throw error
  }
}
