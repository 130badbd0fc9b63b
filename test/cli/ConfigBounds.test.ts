import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/health/FreePort.ts"
import { gpuSerials } from "./GpuSerialsCli.ts"

const folder = mkdtempSync(join(tmpdir(), "gpu-serials-bounds-"))
const cluster = { CLUSTER_NAME: "prod" }
// Only a bound for "it finishes": these tests start the CLI twice, on a machine that may be busy.
const TWO_RUNS = 120_000

describe("gpu-serials config validate refuses values out of range", () => {
  it("refuses a billion workers, naming WORKERS and the range, with exit 2", () => {
    const run = gpuSerials(["config", "validate"], { env: { ...cluster, WORKERS: "1000000000" } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("WORKERS: workers must be between 1 and 1024, got 1000000000")
    expect(run.stdout).toBe("")
  })

  it("refuses an interval longer than a timer can hold, from a flag or the config file", () => {
    const file = join(folder, "interval.yaml")
    writeFileSync(file, "cluster: { name: prod }\nreceivers: { kube_exec: { resync: 9000h } }\n")
    const run = gpuSerials(["config", "validate", "--config", file, "--report-interval", "600h"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(
      "--report-interval: report interval must be 0 (disabled) or between 1s and 168h, got 600h",
    )
    expect(run.stderr).toContain(
      "receivers.kube_exec.resync: resync period must be 0 (disabled) or between 1s and 24h, got 9000h",
    )
  })
})

describe("gpu-serials config validate and run agree", () => {
  // A kubeconfig that does not exist: run gets past its configuration, then fails to start with exit 1.
  const base = { ...cluster, KUBECONFIG: join(folder, "no-such-kubeconfig") }
  const inputs: ReadonlyArray<readonly [string, Readonly<Record<string, string>>, ReadonlyArray<string>]> = [
    ["a valid configuration", {}, []],
    ["a billion workers", { WORKERS: "1000000000" }, []],
    ["a report interval beyond a timer", { REPORT_INTERVAL: "600h" }, []],
    ["leader election", { LEADER_ELECTION: "true", POD_NAME: "gpu-serials-0" }, []],
    ["a zero timeout with the nats exporter", { TIMEOUT: "0" }, ["--exporter", "nats"]],
    ["a device as config file", {}, ["--config", "/dev/zero"]],
    ["an output cap below its range", { NVIDIA_SMI_MAX_OUTPUT: "512" }, []],
  ]
  let port = 0
  beforeAll(async () => {
    port = await freePort()
  })

  it.each(inputs)("on %s", { timeout: TWO_RUNS }, (_name, env, args) => {
    const validate = gpuSerials(["config", "validate", ...args], { env: { ...base, ...env } })
    const run = gpuSerials(["run", ...args], { env: { ...base, ...env, SERVER_PORT: String(port) } })
    if (validate.status === 0) {
      expect(run.status).toBe(1)
      expect(run.stderr).toContain("the service could not start: cannot load the Kubernetes configuration")
      expect(run.stderr).not.toContain("invalid configuration")
    } else {
      expect(validate.status).toBe(2)
      expect(run.status).toBe(2)
      expect(run.stderr).toBe(validate.stderr)
    }
  })
})

describe("the config file is read with a size cap", () => {
  const validate = (path: string) => gpuSerials(["config", "validate", "--config", path], { env: cluster })

  it("refuses a device at once, naming the path, with exit 2", () => {
    const run = validate("/dev/zero")
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(
      "--config: cannot read config file /dev/zero: is not a regular file (a device, FIFO or socket)",
    )
  })

  it("refuses a directory", () => {
    const directory = join(folder, "config.d")
    mkdirSync(directory)
    const run = validate(directory)
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(`--config: cannot read config file ${directory}: is a directory`)
  })

  it("refuses a FIFO without waiting for a writer", () => {
    const fifo = join(folder, "config.fifo")
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
    const run = validate(fifo)
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(`cannot read config file ${fifo}: is not a regular file`)
  })

  it("refuses a 10 MiB file named by GPU_SERIALS_CONFIG, and reads one just under the cap", {
    timeout: TWO_RUNS,
  }, () => {
    const huge = join(folder, "huge.yaml")
    writeFileSync(huge, `# ${"x".repeat(10 * 1024 * 1024)}\ncluster: { name: prod }\n`)
    const run = gpuSerials(["config", "validate"], { env: { GPU_SERIALS_CONFIG: huge } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(
      `GPU_SERIALS_CONFIG: cannot read config file ${huge}: is larger than the 4Mi a config file may have`,
    )
    const large = join(folder, "large.yaml")
    writeFileSync(large, `# ${"x".repeat(4 * 1024 * 1024 - 100)}\ncluster: { name: prod }\n`)
    expect(validate(large)).toMatchObject({ status: 0, stderr: "" })
  })
})
