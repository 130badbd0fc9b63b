import { createInterface } from "node:readline"
import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import type { SimulatorCommand, SimulatorSetup, SimulatorStarted } from "./ControlledSimulator.ts"

/**
 * The simulated cluster as its own process, driven by the bench over stdin and stdout, one JSON line each
 * way: it starts the cluster the setup (argv[2]) describes with the held-back pods not Ready, prints what
 * the bench needs to know, then answers each command. Pod Ready times are the simulator's own clock
 * (milliseconds since the epoch), taken as the pod's status turns Ready.
 */
const setup = JSON.parse(process.argv[2] ?? "{}") as SimulatorSetup
const cluster = await startSimulatedCluster(setup.options)
const nodeNames = cluster.nodeNames()
const heldBack = nodeNames.slice(0, setup.heldBack)
for (const node of heldBack) cluster.setPodReady(node, false)

const nowMs = (): number => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const answer = (line: unknown): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`)
}

const started: SimulatorStarted = {
  url: cluster.url,
  kubeconfigPath: cluster.kubeconfigPath,
  namespace: cluster.namespace,
  container: cluster.container,
  heldBack,
  pods: nodeNames.flatMap((node) => {
    const view = cluster.node(node)
    return view?.pod === undefined ? [] : [{ node, pod: view.pod, driverVersion: view.driverVersion }]
  }),
}
answer(started)

const obey = async (command: SimulatorCommand): Promise<void> => {
  switch (command.op) {
    case "stats":
      answer(cluster.stats())
      return
    case "ready": {
      const readyAtMs: Record<string, number> = {}
      for (const node of command.nodes) {
        readyAtMs[node] = nowMs()
        cluster.setPodReady(node, true)
        await sleep(1000 / command.perSecond)
      }
      answer(readyAtMs)
      return
    }
  }
}

const stop = async (): Promise<void> => {
  await cluster.close()
  process.exit(0)
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "") await obey(JSON.parse(line) as SimulatorCommand)
}
await stop()
