import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { requestApi } from "../src/ApiRequest.ts"
import { FleetTruth } from "../src/ledger/FleetTruth.ts"
import { parseLedger } from "../src/ledger/LedgerJsonl.ts"

const mainPath = join(import.meta.dirname, "../src/main.ts")

describe("the simulated cluster as a separate process", () => {
  let directory: string

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "gpu-sim-main-"))
  })

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  it("prints its URL and kubeconfig as one JSON line, exits 0 on SIGTERM and leaves its ledger", async () => {
    const kubeconfigPath = join(directory, "kubeconfig")
    const ledgerPath = join(directory, "ledger.jsonl")
    const child = spawn(
      process.execPath,
      [
        mainPath,
        ...["--nodes", "300", "--exec-latency", "200ms", "--port", "0"],
        ...["--kubeconfig", kubeconfigPath, "--ledger", ledgerPath],
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    )
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve)
        child.once("exit", () => reject(new Error("exited before printing its address")))
      })
      const started = JSON.parse(line) as { url: string; kubeconfigPath: string; nodes: number; namespace: string }
      expect(started).toMatchObject({ kubeconfigPath, ledgerPath, nodes: 300, namespace: "gpu-operator" })
      expect(started.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      expect(existsSync(kubeconfigPath)).toBe(true)
      const kubeconfig = parse(await readFile(kubeconfigPath, "utf8")) as {
        clusters: Array<{ cluster: { server: string; "certificate-authority-data": string } }>
        users: Array<{ user: { token: string } }>
      }
      const cluster = kubeconfig.clusters[0]?.cluster
      expect(cluster?.server).toBe(started.url)
      const response = await requestApi(
        {
          url: started.url,
          token: kubeconfig.users[0]?.user.token ?? "",
          certificateAuthority: Buffer.from(cluster?.["certificate-authority-data"] ?? "", "base64").toString(),
        },
        "/version",
      )
      const version = JSON.parse(response.body) as { gitVersion: string }
      expect(version.gitVersion).toMatch(/^v1\.32\./)
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
    const entries = parseLedger(await readFile(ledgerPath, "utf8"))
    expect(entries.filter((entry) => entry.entry === "node-joined")).toHaveLength(300)
    const truth = FleetTruth.of(entries)
    expect(truth.nodeNames()).toHaveLength(300)
    expect(truth.whereNow().size).toBe(entries.filter((entry) => entry.entry === "gpu-placed").length)
  })

  it("exits 2 with the reason on a bad flag", async () => {
    const child = spawn(process.execPath, [mainPath, "--nodes", "many"], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const code = await new Promise<number | null>((resolve) => child.on("exit", (exitCode) => resolve(exitCode)))
    expect(code).toBe(2)
    expect(stderr).toContain('--nodes: "many" is not a non-negative number')
  })
})
