import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { gpuSerials, repositoryRoot } from "./GpuSerialsCli.ts"

const configFile = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), "gpu-serials-config-")), "config.yaml")
  writeFileSync(path, text)
  return path
}

describe("gpu-serials config", () => {
  it("reports every problem of an invalid configuration at once, with its key, and exits 2", () => {
    const run = gpuSerials(["config", "validate"], { env: { WORKERS: "0", SERVER_PORT: "80", CLUSTER_NAME: "" } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("CLUSTER_NAME: cluster name must be specified")
    expect(run.stderr).toContain("SERVER_PORT: server port must be a valid integer between 1000 and 65535")
    expect(run.stderr).toContain("WORKERS: workers must be > 0")
  })

  it("accepts the example config file", () => {
    const run = gpuSerials(["config", "validate", "--config", join(repositoryRoot, "config/gpu-serials.yaml")])
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
  })

  it("accepts a hub's pipeline and refuses a receiver and processor that do not fit each other, exit 2", () => {
    const folder = mkdtempSync(join(tmpdir(), "gpu-serials-hub-config-"))
    const file = (receiver: string, processor: string) => {
      const path = join(folder, `${receiver}-${processor}.yaml`)
      writeFileSync(
        path,
        [
          "cluster: { name: fleet }",
          "receivers: { nats: { url: nats://hub:4222, clusters: [east, west] }, kube_exec: }",
          "processors: { fleet:, inventory: }",
          "exporters: { stdout: }",
          `service: { pipelines: { gpus: { receivers: [${receiver}], processors: [${processor}], exporters: [stdout] } } }`,
          "",
        ].join("\n"),
      )
      return path
    }
    const hub = gpuSerials(["config", "validate", "--config", file("nats", "fleet")])
    expect(hub.stderr).toBe("")
    expect(hub.status).toBe(0)
    const mismatched = gpuSerials(["config", "validate", "--config", file("nats", "inventory")])
    expect(mismatched.status).toBe(2)
    expect(mismatched.stderr).toContain(
      'service.pipelines.gpus.processors: processor "inventory" takes node observations and receiver "nats" makes cluster observations',
    )
  })

  it("names a missing config file under the key that named it", () => {
    const run = gpuSerials(["config", "validate", "--config", "/nonexistent.yaml"], { env: { CLUSTER_NAME: "c" } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("--config: cannot read config file /nonexistent.yaml: no such file")
  })

  it("refuses an inventory store that is not memory or a pipeline exporter keeping one, as run would", () => {
    const refused = gpuSerials(["config", "validate"], { env: { CLUSTER_NAME: "c", INVENTORY_STORE: "nats" } })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain(
      'INVENTORY_STORE: inventory store "nats" is neither memory, node-labels nor an exporter of the pipeline that keeps a store (types: nats, postgres)',
    )
    const kept = gpuSerials(["config", "validate", "--exporter", "stdout,nats"], {
      env: { CLUSTER_NAME: "c", INVENTORY_STORE: "nats" },
    })
    expect(kept.stderr).toBe("")
    expect(kept.status).toBe(0)
  })

  it("refuses the node-labels store while node labels are disabled, naming the store's key", () => {
    const refused = gpuSerials(["config", "validate"], {
      env: { CLUSTER_NAME: "c", INVENTORY_STORE: "node-labels", LABELS_ENABLED: "false" },
    })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain(
      'INVENTORY_STORE: inventory store "node-labels" is written by the node labeller: it needs node labels enabled (LABELS_ENABLED)',
    )
    const enabled = gpuSerials(["config", "validate"], { env: { CLUSTER_NAME: "c", INVENTORY_STORE: "node-labels" } })
    expect(enabled.stderr).toBe("")
    expect(enabled.status).toBe(0)
  })

  it("loads a third-party exporter named by module and reports its section's problems under its key", () => {
    const module = join(repositoryRoot, "test/service/third-party/memory-exporter.ts")
    const valid = configFile(
      `cluster: { name: lab }\nexporters:\n  memory: { module: "${module}", label: inventory }\nservice:\n  pipelines:\n    gpus: { exporters: [memory] }\n`,
    )
    expect(gpuSerials(["config", "validate", "--config", valid]).status).toBe(0)
    const invalid = configFile(
      `cluster: { name: lab }\nexporters:\n  memory: { module: "${module}", colour: blue }\n  stdout: { queueSize: 0 }\nservice:\n  pipelines:\n    gpus: { exporters: [memory, stdout] }\n`,
    )
    const run = gpuSerials(["config", "validate", "--config", invalid])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("exporters.memory.colour: unknown key")
    expect(run.stderr).toContain("exporters.stdout.queueSize")
  })

  it("prints the effective configuration with flags over environment, and secrets redacted", () => {
    const run = gpuSerials(["config", "print", "--show-origin", "--workers", "4"], {
      env: { CLUSTER_NAME: "prod", WORKERS: "8", HTTP_AUTH_TOKEN: "s3cr3t-t0ken", EXPORTER_TYPE: "stdout" },
    })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain("workers: 4 # flag --workers")
    expect(run.stdout).toContain("name: prod # env CLUSTER_NAME")
    expect(run.stdout).not.toContain("s3cr3t-t0ken")
  })

  it("rejects a value given to --show-origin with exit code 2", () => {
    const run = gpuSerials(["config", "print", "--show-origin=yes"], { env: { CLUSTER_NAME: "prod" } })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("gpu-serials config: option --show-origin takes no value")
  })
})

describe("gpu-serials commands", () => {
  it("prints help and the version with exit code 0", () => {
    expect(gpuSerials(["--help"])).toMatchObject({ status: 0, stdout: expect.stringContaining("Usage: gpu-serials") })
    expect(gpuSerials(["parse", "--help"]).stdout).toContain("Usage: gpu-serials parse")
    expect(gpuSerials(["run", "--help"]).stdout).toContain("--workers N")
    expect(gpuSerials(["version"]).stdout).toMatch(/^gpu-serials \d+\.\d+\.\d+ \(schema gpu-serials\/v1/)
  })

  it("rejects an unknown command with exit code 2", () => {
    const run = gpuSerials(["serve"])
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("unknown command serve")
  })
})
