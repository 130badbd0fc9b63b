import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { gpuSerials, jsonLines, repositoryRoot } from "./GpuSerialsCli.ts"

/** A copy of what the image holds: the compiled product, its config and its dependencies, without the development packages. */
const productionLikeTree = (): string => {
  const tree = mkdtempSync(join(tmpdir(), "gpu-serials-image-"))
  upToDateCompiledCli()
  for (const entry of ["dist", "config", "package.json"]) {
    cpSync(join(repositoryRoot, entry), join(tree, entry), { recursive: true })
  }
  mkdirSync(join(tree, "node_modules"))
  for (const entry of readdirSync(join(repositoryRoot, "node_modules"))) {
    if (entry !== "@gpu-serials" && entry !== ".bin") {
      symlinkSync(join(repositoryRoot, "node_modules", entry), join(tree, "node_modules", entry))
    }
  }
  return tree
}

describe("gpu-serials demo", () => {
  it("runs the service against the simulated cluster, prints records, the broken node's error and a summary", () => {
    const run = gpuSerials(["demo", "--duration", "6s"])
    expect(run.stderr).toContain("simulated cluster at https://127.0.0.1:")
    expect(run.status).toBe(0)
    const records = jsonLines(run.stdout)
    expect(records.length).toBeGreaterThan(20)
    expect(records.every((record) => record.schema === "gpu-serials/v1" && record.cluster === "demo")).toBe(true)
    expect(records.filter((record) => record.product === "NVIDIA GB200").every((record) => record.chassis !== "")).toBe(
      true,
    )
    expect(run.stderr).toMatch(/driver-not-loaded: 1 node/)
    expect(records.some((record) => record.machine === "na" && record.gpu === "")).toBe(true)

    const added = records.filter((record) => record.event === "added").length
    const progress = run.stderr.split("\n").filter((line) => line.startsWith("demo after "))
    expect(progress.length).toBeGreaterThanOrEqual(1)
    expect(progress[0]).toMatch(
      /^demo after 5 s: GPUs \d+ known now \(\d+ ever read\), nodes \d+ with GPUs now \(\d+ ever read\), events added \d+, moved \d+, removed \d+, observed \d+, health \d+, errors \d+ \(1 node\)$/,
    )
    const summary = run.stderr.slice(run.stderr.indexOf("demo summary after"))
    expect(summary).toContain(`  events: added ${added}, moved 0, removed 0, observed 0, health 0\n`)
    expect(summary).toMatch(
      /\n {2}health of the GPUs known now: ok \d+, degraded \d+, failed \d+(, not reported \d+)?\n/,
    )
    expect(summary).toMatch(/\n {2}nodes gone: 0 \(their device-plugin pod or the node itself was deleted;/)
    expect(summary).toContain("removed once gone for the removal grace, 10s,")
    expect(summary).toMatch(/\n {2}errors by kind:\n {4}driver-not-loaded: 1 node \(/)
    expect(summary).toContain(`  exporters:\n    stdout: ${records.length} sent, 0 dropped\n`)
    const known = /GPUs (\d+) known now \((\d+) ever read\)/.exec(summary)
    expect(Number(known?.[1])).toBe(added)
    expect(Number(known?.[2])).toBe(added)
  }, 30_000)

  it("with --dra reads the DRA driver's kubelet-plugin pods, and its records are the GPUs the ResourceSlices list", async () => {
    const demo = spawn(process.execPath, [upToDateCompiledCli(), "demo", "--dra", "--duration", "8s"], {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let stdout = ""
    let stderr = ""
    demo.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    demo.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const exited = new Promise<number | null>((resolve) => demo.once("exit", (code) => resolve(code)))
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const kubeconfigOf = () =>
      /--kubeconfig (\S+) get resourceslices --field-selector spec\.driver=gpu\.nvidia\.com\n/.exec(stderr)?.[1]
    for (let tries = 0; tries < 100 && kubeconfigOf() === undefined; tries++) await sleep(100)
    const kubeconfig = kubeconfigOf()
    expect(kubeconfig, stderr).toBeDefined()
    const kubectl = (args: ReadonlyArray<string>) =>
      spawnSync("kubectl", ["--kubeconfig", kubeconfig ?? "", ...args], { encoding: "utf8", timeout: 10_000 })
    interface Slice {
      readonly spec: {
        readonly driver: string
        readonly devices: ReadonlyArray<{ readonly attributes: Readonly<Record<string, { readonly string?: string }>> }>
      }
    }
    let slices: ReadonlyArray<Slice> = []
    for (let tries = 0; tries < 50 && slices.length === 0; tries++) {
      const listed = kubectl(["get", "resourceslices", "--field-selector", "spec.driver=gpu.nvidia.com", "-o", "json"])
      expect(listed.status, listed.stderr).toBe(0)
      slices = (JSON.parse(listed.stdout) as { items: ReadonlyArray<Slice> }).items
      if (slices.length === 0) await sleep(100)
    }
    expect(await exited).toBe(0)
    expect(stderr).toContain("GPUs allocated through NVIDIA's DRA driver")
    // A full GPU by its uuid, a GPU in MIG mode by its MIG devices' parentUUID.
    const sliceGpus = new Set(
      slices.flatMap((slice) =>
        slice.spec.devices.map((device) =>
          device.attributes.type?.string === "mig"
            ? device.attributes.parentUUID?.string
            : device.attributes.uuid?.string,
        ),
      ),
    )
    expect(slices.every((slice) => slice.spec.driver === "gpu.nvidia.com")).toBe(true)
    const records = jsonLines(stdout)
    expect(records.length).toBeGreaterThan(20)
    expect(records.every((record) => String(record.source).startsWith("nvidia-dra-driver-gpu/"))).toBe(true)
    expect(new Set(records.map((record) => record.uuid))).toEqual(sliceGpus)
    // A GPU in MIG mode carries the MIG devices its slice lists under its UUID, and only those.
    const sliceMigDevices = (parent: unknown) =>
      slices
        .flatMap((slice) => slice.spec.devices)
        .filter((device) => device.attributes.type?.string === "mig" && device.attributes.parentUUID?.string === parent)
        .map((device) => ({ uuid: device.attributes.uuid?.string, profile: device.attributes.profile?.string }))
    const migRecords = records.filter((record) => record.migMode === "Enabled")
    expect(migRecords.length).toBeGreaterThan(0)
    for (const record of migRecords) {
      const listed = sliceMigDevices(record.uuid)
      expect(listed.length).toBeGreaterThan(0)
      expect(record.migDevices).toEqual(expect.arrayContaining(listed))
      expect(record.migDevices).toHaveLength(listed.length)
    }
    expect(records.filter((record) => record.migMode !== "Enabled").every((record) => !("migDevices" in record))).toBe(
      true,
    )
    expect(stderr).toContain("  nodes known from their ResourceSlices alone, without serials: 0\n")
    // The node whose driver is broken runs no plugin that publishes: no slice, no record, its error reported.
    expect(stderr).toMatch(/\n {4}driver-not-loaded: 1 node \(/)
  }, 30_000)

  it("says which exporter never reached its sink, and exits 1", () => {
    const run = gpuSerials([
      "demo",
      "--duration",
      "4s",
      "--exporter",
      "stdout,postgres",
      "--postgres-url",
      "postgres://postgres@127.0.0.1:1/none?sslmode=disable",
    ])
    expect(run.status, run.stderr).toBe(1)
    expect(run.stderr).toMatch(/\n {4}postgres: 0 sent, \d+ dropped, never wrote \(its sink was not reached\)\n/)
    expect(run.stderr).toMatch(/\n {4}stdout: [1-9]\d* sent, 0 dropped\n/)
    expect(run.stderr).toContain("gpu-serials demo: postgres never wrote a record")
  }, 30_000)

  it("shows churn as moved and removed events within a short run, thanks to its short removal grace", () => {
    const run = gpuSerials(["demo", "--duration", "25s", "--churn", "30"], { timeoutMs: 60_000 })
    expect(run.status).toBe(0)
    const events = jsonLines(run.stdout).map((record) => record.event)
    expect(events).toContain("moved")
    expect(events).toContain("removed")
    expect(run.stderr).toMatch(/ {2}events: added \d+, moved [1-9]\d*, removed [1-9]\d*, observed \d+, health \d+\n/)
  }, 90_000)

  it("keeps its health server on the loopback interface and honours the user's removal grace", () => {
    const run = gpuSerials(["demo", "--duration", "2s", "--nodes", "2", "--removal-grace", "1m"])
    expect(run.status).toBe(0)
    expect(run.stderr).toMatch(
      /node labels with GPU serials:\n {2}kubectl --kubeconfig \S+ get nodes -L gpu-serials\.dev\/gpu-0,gpu-serials\.dev\/chassis\n/,
    )
    const listening = jsonLines(
      run.stderr
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .join("\n"),
    ).find((line) => line.msg === "health server listening")
    expect(listening).toMatchObject({ address: "127.0.0.1" })
    expect(run.stderr).toMatch(/health and metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/)
    expect(run.stderr).toMatch(/fleet page at http:\/\/127\.0\.0\.1:\d+\/\n/)
    expect(run.stderr).toContain("removed once gone for the removal grace, 1m,")
  }, 30_000)

  it("sends to its own HTTP receiver and to the PostgreSQL database given, and counts what the receiver got", () => {
    const database = `gpu_serials_demo_${process.pid}`
    const psql = (sql: string) =>
      spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc", sql], { encoding: "utf8" })
    expect(psql(`create database ${database}`).status).toBe(0)
    try {
      const run = gpuSerials([
        "demo",
        "--duration",
        "5s",
        "--exporter",
        "stdout,http,postgres",
        "--postgres-url",
        `postgres://postgres@127.0.0.1:5432/${database}?sslmode=disable`,
      ])
      expect(run.status, run.stderr).toBe(0)
      const sent = jsonLines(run.stdout).length
      expect(sent).toBeGreaterThan(20)
      expect(run.stderr).toMatch(
        new RegExp(`http receiver at http://127\\.0\\.0\\.1:\\d+/gpus: ${sent} records in \\d+ POSTs`),
      )
      const rows = spawnSync(
        "psql",
        ["-h", "127.0.0.1", "-U", "postgres", "-d", database, "-tAc", "select count(*) from gpu_serials"],
        { encoding: "utf8" },
      )
      expect(Number(rows.stdout.trim())).toBe(sent)
    } finally {
      psql(`drop database if exists ${database} with (force)`)
    }
  })

  it("exits 1 with one line saying so where the simulated cluster is not installed", () => {
    const tree = productionLikeTree()
    try {
      const run = spawnSync(process.execPath, [upToDateCompiledCli(), "demo", "--duration", "1s"], {
        cwd: tree,
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8",
        timeout: 20_000,
      })
      expect(run.stderr).toBe(
        "gpu-serials demo: the simulated cluster is not installed in this build; run the demo from a source checkout after `npm ci`\n",
      )
      expect(run.status).toBe(1)
      expect(run.stdout).toBe("")
    } finally {
      rmSync(tree, { recursive: true, force: true })
    }
  })

  it("rejects a bad demo option with exit code 2", () => {
    const run = gpuSerials(["demo", "--nodes", "0", "--fault-rate", "2"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--nodes must be 1 to 10000, not 0")
    expect(run.stderr).toContain("--fault-rate must be a probability from 0 to 1, not 2")
  })

  it("reads its own options among the setting flags, one at a time", () => {
    const run = gpuSerials(["demo", "--workers", "2", "--nodes", "--seed", "lab"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("gpu-serials demo: option --nodes needs a value")
    expect(run.stderr).not.toContain("option --seed")
  })
})
