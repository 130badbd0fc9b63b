import { startSimulatedCluster } from "./SimulatedCluster.ts"
import { CommandLineError, parseSimulatorCommand, simulatorUsage } from "./SimulatorCommandLine.ts"

/**
 * The simulated cluster as its own process, for benchmarks and manual runs:
 * `npm run sim -- --nodes 2000 --exec-latency 200ms --port 0 --kubeconfig /tmp/x`.
 */
const main = async (): Promise<number> => {
  let command: ReturnType<typeof parseSimulatorCommand>
  try {
    command = parseSimulatorCommand(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error
    process.stderr.write(`gpu-sim: ${error.message}\n\n${simulatorUsage}`)
    return 2
  }
  if (command.help) {
    process.stdout.write(simulatorUsage)
    return 0
  }
  const cluster = await startSimulatedCluster(command.options)
  const stats = cluster.stats()
  process.stdout.write(
    `${JSON.stringify({
      url: cluster.url,
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: cluster.namespace,
      labelSelector: cluster.labelSelector,
      container: cluster.container,
      dra: cluster.dra,
      nodes: stats.nodes,
      ...(command.options.ledgerPath === undefined ? {} : { ledgerPath: command.options.ledgerPath }),
      pid: process.pid,
    })}\n`,
  )
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve)
    process.once("SIGINT", resolve)
  })
  await cluster.close()
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`gpu-sim: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
