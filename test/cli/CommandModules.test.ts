import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { upToDateCompiledCli } from "../support/CompiledCli.ts"
import { describeWithFixtures, fixtureDirectory } from "../support/fixtures.ts"
import { repositoryRoot } from "./GpuSerialsCli.ts"

/** The client libraries only the commands that talk to a cluster, a collector, NATS or PostgreSQL may load. */
const heavyPackages = ["@kubernetes/client-node", "@opentelemetry/", "@nats-io/", "pg", "ws"]

const recordFolder = mkdtempSync(join(tmpdir(), "gpu-serials-modules-"))
afterAll(() => rmSync(recordFolder, { recursive: true, force: true }))

let runs = 0

/** The bundled CLI's chunks (`dist/bin/`) and the packages in each, as the build wrote them. */
const bundleFolder = `${pathToFileURL(join(repositoryRoot, "dist", "bin")).href}/`
const bundledPackages = (): Readonly<Record<string, ReadonlyArray<string>>> =>
  JSON.parse(readFileSync(join(repositoryRoot, "dist", "bin", "modules.json"), "utf8"))

/** Runs the compiled CLI with a module hook; answers its exit status and the packages it loaded. */
const loadedPackages = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) => {
  runs += 1
  const record = join(recordFolder, `run-${runs}.txt`)
  const run = spawnSync(
    process.execPath,
    ["--import", "./test/support/ModuleLoadRecorder.ts", upToDateCompiledCli(), ...args],
    {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? "", MODULE_LOAD_RECORD: record, ...env },
      encoding: "utf8",
      timeout: 20_000,
    },
  )
  const urls = readFileSync(record, "utf8").split("\n")
  // The packages bundled into the chunks it loaded, and those it loaded from node_modules itself.
  const chunks = bundledPackages()
  const bundled = urls.flatMap((url) =>
    url.startsWith(bundleFolder) ? (chunks[url.slice(bundleFolder.length)] ?? []) : [],
  )
  const packages = heavyPackages.filter(
    (name) =>
      bundled.some((found) => (name.endsWith("/") ? found.startsWith(name) : found === name)) ||
      urls.some((url) => url.includes(`/node_modules/${name}${name.endsWith("/") ? "" : "/"}`)),
  )
  return { status: run.status, stderr: run.stderr, packages, modules: urls.length }
}

describe("the modules a command loads", () => {
  it("version and the help of every command load no client library", () => {
    const helps = ["run", "demo", "parse", "config", "where", "tail", "hub"].map((command) => [command, "--help"])
    for (const args of [["version"], ["--help"], ["help", "run"], ...helps]) {
      const run = loadedPackages(args)
      expect(run.status, run.stderr).toBe(0)
      expect(run.packages, args.join(" ")).toEqual([])
    }
  })

  it("config validate and config print load no client library, even with every exporter configured", () => {
    const env = {
      CLUSTER_NAME: "prod",
      EXPORTER_TYPE: "stdout,otlp,nats,http,postgres",
      OTLP_ENDPOINT: "http://127.0.0.1:4318",
      NATS_URL: "nats://127.0.0.1:4222",
      HTTP_ENDPOINT: "http://127.0.0.1:8080/gpus",
      POSTGRES_URL: "postgres://gpu-serials@127.0.0.1:5432/gpus",
      INVENTORY_STORE: "nats",
    }
    for (const args of [
      ["config", "validate"],
      ["config", "print"],
    ]) {
      const run = loadedPackages(args, env)
      expect(run.status, run.stderr).toBe(0)
      expect(run.packages, args.join(" ")).toEqual([])
    }
  })

  it("run loads OpenTelemetry and NATS, which it uses, and the Kubernetes client only for credential plugins", () => {
    const env = { CLUSTER_NAME: "prod", EXPORTER_TYPE: "stdout,nats", NATS_URL: "nats://127.0.0.1:1" }
    const missing = loadedPackages(["run", "--kubeconfig", "/nonexistent/kubeconfig"], env)
    expect(missing.stderr).toContain("cannot load the Kubernetes configuration from /nonexistent/kubeconfig")
    expect(missing.status).toBe(1)
    expect(missing.packages).toEqual(expect.arrayContaining(["@opentelemetry/", "@nats-io/"]))
    expect(missing.packages).not.toContain("@kubernetes/client-node")
    const kubeconfig = join(recordFolder, "kubeconfig")
    const withUser = (user: string) =>
      [
        "current-context: prod",
        "clusters: [{name: prod, cluster: {server: 'https://127.0.0.1:1'}}]",
        "contexts: [{name: prod, context: {cluster: prod, user: reader}}]",
        `users: [{name: ${user}, user: {token: t}}]`,
      ].join("\n")
    writeFileSync(kubeconfig, withUser("someone-else"))
    const staticCredentials = loadedPackages(["run", "--kubeconfig", kubeconfig], env)
    expect(staticCredentials.stderr).toContain('context "prod" names user "reader", which is not defined')
    expect(staticCredentials.status).toBe(1)
    expect(staticCredentials.packages).not.toContain("@kubernetes/client-node")
  })
})

describeWithFixtures("the modules parse loads", () => {
  it("parse of a capture loads no client library", () => {
    const run = loadedPackages([
      "parse",
      join(fixtureDirectory, "h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml"),
    ])
    expect(run.status, run.stderr).toBe(0)
    expect(run.packages).toEqual([])
  })
})
