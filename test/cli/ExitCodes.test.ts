import { readFileSync } from "node:fs"
import { join } from "node:path"
import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { gpuSerials, repositoryRoot, startGpuSerials } from "./GpuSerialsCli.ts"
import { startHungCollector } from "./SilentSinks.ts"

/** The rows of the exit-code table of docs/operations.md: the codes of each row and its example. */
const documentedCodes = (): ReadonlyArray<{ readonly codes: ReadonlyArray<number>; readonly example: string }> => {
  const page = readFileSync(join(repositoryRoot, "docs/operations.md"), "utf8")
  const section = page.slice(page.indexOf("\n## Exit codes\n"))
  return section
    .split("\n")
    .filter((line) => /^\| \d/.test(line))
    .map((line) => {
      const [codes = "", , example = ""] = line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim())
      return { codes: codes.split(",").map((code) => Number(code.trim())), example }
    })
}

/** Runs `gpu-serials run` with a collector that never answers, so its shutdown lasts, and signals it twice. */
const stoppedTwice = async (signal: "SIGTERM" | "SIGINT"): Promise<number | null> => {
  const cluster = await startSimulatedCluster({ nodes: 1, modelMix: { t4: 1 }, seed: "exit-codes", execLatency: 20 })
  const collector = await startHungCollector()
  try {
    const service = startGpuSerials(
      ["run", "--kubeconfig", cluster.kubeconfigPath, "--server-port", String(await freePort())],
      {
        CLUSTER_NAME: "exit-codes",
        EXPORTER_TYPE: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        SHUTDOWN_TIMEOUT: "20s",
        SERVER_ADDRESS: "127.0.0.1",
      },
    )
    await service.logged("gpu-serials running")
    service.child.kill(signal)
    await service.logged("gpu-serials shutting down")
    service.child.kill(signal)
    return (await service.exited).code
  } finally {
    await collector.close()
    await cluster.close()
  }
}

describe("the exit codes docs/operations.md lists", () => {
  it("are every code a command ends with, each with an example", () => {
    expect(documentedCodes().flatMap((row) => row.codes)).toEqual([0, 1, 2, 143, 130])
    for (const row of documentedCodes()) expect(row.example, String(row.codes)).not.toBe("")
  })

  it("0: gpu-serials version", () => {
    expect(documentedCodes()[0]?.example).toContain("gpu-serials version")
    expect(gpuSerials(["version"]).status).toBe(0)
  })

  it("1: run with a kubeconfig that cannot be read, saying what it could not start", () => {
    expect(documentedCodes()[1]?.example).toContain("gpu-serials run --kubeconfig /nonexistent/kubeconfig")
    const run = gpuSerials(["run", "--kubeconfig", "/nonexistent/kubeconfig"], { env: { CLUSTER_NAME: "prod" } })
    expect(run.status, run.stderr).toBe(1)
    expect(run.stderr).toContain("the service could not start")
  })

  it("2: run with a setting out of its range, naming it", () => {
    expect(documentedCodes()[2]?.example).toContain("gpu-serials run --workers 0")
    const run = gpuSerials(["run", "--workers", "0"], { env: { CLUSTER_NAME: "prod" } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("workers must be > 0")
  })

  it("143 and 130: a second SIGTERM or SIGINT during shutdown", async () => {
    expect(documentedCodes()[3]?.example).toContain("two SIGTERMs")
    expect(await stoppedTwice("SIGTERM")).toBe(143)
    expect(await stoppedTwice("SIGINT")).toBe(130)
  }, 60_000)
})
