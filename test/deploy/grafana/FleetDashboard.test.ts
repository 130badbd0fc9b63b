import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { startGpuSerials } from "../../cli/GpuSerialsCli.ts"
import { type Dashboard, panelsOf, queriesOf, readDashboard, withVariables } from "./GrafanaDashboard.ts"
import { metricNamesOf } from "./PromqlMetricNames.ts"

const fleet = readDashboard("fleet.json")
const scratch = mkdtempSync(join(tmpdir(), "gpu-serials-fleet-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Served by NVIDIA's dcgm-exporter, not by gpu-serials: the fleet dashboard joins them where present. */
const dcgmMetrics = new Set(["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_UTIL"])

/** The table of every GPU, joined with DCGM. */
const gpuTable = "GPUs and their DCGM readings"

const promtool = (args: ReadonlyArray<string>) => spawnSync("promtool", args, { encoding: "utf8", timeout: 20_000 })

/** The query of a panel of the fleet dashboard, as Grafana sends it. */
const panelQuery = (dashboard: Dashboard, title: string, refId: string): string => {
  const target = panelsOf(dashboard)
    .find((panel) => panel.title === title)
    ?.targets?.find((candidate) => candidate.refId === refId)
  if (target === undefined) throw new Error(`no query ${refId} in panel "${title}"`)
  return withVariables(dashboard, target.expr)
}

/** The names of the samples on `/metrics` of `gpu-serials demo` once it has read its simulated nodes. */
const demoMetricNames = async (): Promise<ReadonlySet<string>> => {
  const demo = startGpuSerials(["demo", "--duration", "60s"])
  try {
    const giveUpAt = Date.now() + 40_000
    // By its first progress line (5 s in) the demo has read its nodes and exported their records, so every
    // instrument that records on a reading or a write has its series.
    while (!demo.stderr().includes("demo after ") && Date.now() < giveUpAt) {
      if (demo.child.exitCode !== null) throw new Error(`the demo exited:\n${demo.stderr()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const url = /health and metrics at (http:\/\/\S+\/metrics)/.exec(demo.stderr())?.[1]
    if (url === undefined) throw new Error(`the demo did not say where its metrics are:\n${demo.stderr()}`)
    const text = await (await fetch(url)).text()
    return new Set(
      text
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0] ?? line),
    )
  } finally {
    demo.child.kill("SIGTERM")
    await demo.exited
  }
}

describe("deploy/grafana/fleet.json", () => {
  const queries = queriesOf(fleet).map((query) => ({ ...query, expr: withVariables(fleet, query.expr) }))

  it("has PromQL that promtool parses, every panel query and variable selector", () => {
    expect(queries.length).toBeGreaterThan(20)
    const rulesFile = join(scratch, "dashboard-rules.yaml")
    const rules = queries.map((query, index) => ({ record: `dashboard:query_${index}`, expr: query.expr }))
    writeFileSync(rulesFile, stringify({ groups: [{ name: "fleet-dashboard", rules }] }))
    const check = promtool(["check", "rules", rulesFile])
    const where = queries.map((query, index) => `dashboard:query_${index} = ${query.where}`).join("\n")
    expect(check.status, `${check.stdout}${check.stderr}\n${where}`).toBe(0)
    expect(check.stdout).toContain(`SUCCESS: ${rules.length} rules found`)
  })

  it("names only metrics that /metrics of a demo run exposes, besides DCGM's", async () => {
    const exposed = await demoMetricNames()
    expect(exposed).toContain("gpu_serials_readings_total")
    const missing = queries.flatMap((query) =>
      [...metricNamesOf(query.expr)]
        .filter((name) => !exposed.has(name) && !dcgmMetrics.has(name))
        .map((name) => `${name} (${query.where})`),
    )
    expect(missing).toEqual([])
  }, 60_000)

  it("lists every GPU in the GPU table with DCGM readings where dcgm-exporter runs, and without them where not", () => {
    const gpu = (n: number, instance: string) =>
      `gpu_serials_gpu_info{job="gpu-serials", instance="${instance}", cluster="prod-eu", Hostname="gpu-node-${n}", modelName="NVIDIA H100 80GB HBM3", UUID="GPU-${n}", pci_bus_id="00000000:1B:00.0", serial="165000000000${n}"}`
    const gpuLabels = (n: number) =>
      `{cluster="prod-eu", Hostname="gpu-node-${n}", modelName="NVIDIA H100 80GB HBM3", UUID="GPU-${n}", pci_bus_id="00000000:1B:00.0", serial="165000000000${n}"}`
    const dcgm = (metric: string, n: number, instance: string) =>
      `${metric}{job="dcgm-exporter", instance="${instance}", gpu="0", UUID="GPU-${n}", Hostname="gpu-node-${n}", modelName="NVIDIA H100 80GB HBM3"}`
    const tests = {
      rule_files: [],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          // Two gpu-serials replicas report the same GPUs; dcgm-exporter runs on gpu-node-1 only, and
          // during its rollout two of its pods report the same GPU.
          input_series: [
            { series: gpu(1, "10.0.0.1:8080"), values: "1x10" },
            { series: gpu(1, "10.0.0.2:8080"), values: "1x10" },
            { series: gpu(2, "10.0.0.1:8080"), values: "1x10" },
            { series: gpu(2, "10.0.0.2:8080"), values: "1x10" },
            { series: dcgm("DCGM_FI_DEV_GPU_TEMP", 1, "10.0.1.1:9400"), values: "61x10" },
            { series: dcgm("DCGM_FI_DEV_GPU_TEMP", 1, "10.0.1.2:9400"), values: "61x10" },
            { series: dcgm("DCGM_FI_DEV_GPU_UTIL", 1, "10.0.1.1:9400"), values: "87x10" },
          ],
          promql_expr_test: [
            {
              expr: panelQuery(fleet, gpuTable, "A"),
              eval_time: "5m",
              exp_samples: [
                { labels: gpuLabels(1), value: 1 },
                { labels: gpuLabels(2), value: 1 },
              ],
            },
            {
              expr: panelQuery(fleet, gpuTable, "B"),
              eval_time: "5m",
              exp_samples: [{ labels: gpuLabels(1), value: 61 }],
            },
            {
              expr: panelQuery(fleet, gpuTable, "C"),
              eval_time: "5m",
              exp_samples: [{ labels: gpuLabels(1), value: 87 }],
            },
          ],
        },
        {
          interval: "1m",
          // No dcgm-exporter; the otlp exporter's gpu_serials_gpu_info, pushed through a Collector, has
          // other labels (no cluster, no Hostname) and stays out of the table.
          input_series: [
            { series: gpu(1, "10.0.0.1:8080"), values: "1x10" },
            { series: gpu(1, "10.0.0.2:8080"), values: "1x10" },
            { series: gpu(2, "10.0.0.1:8080"), values: "1x10" },
            {
              series: `gpu_serials_gpu_info{job="otel-collector", uuid="GPU-9", serial="1650000000009", model="NVIDIA H100 80GB HBM3", node="gpu-node-9"}`,
              values: "1x10",
            },
          ],
          promql_expr_test: [
            { expr: panelQuery(fleet, gpuTable, "B"), eval_time: "5m", exp_samples: [] },
            { expr: panelQuery(fleet, gpuTable, "C"), eval_time: "5m", exp_samples: [] },
            {
              expr: panelQuery(fleet, "GPUs by model", "A"),
              eval_time: "5m",
              exp_samples: [{ labels: '{modelName="NVIDIA H100 80GB HBM3"}', value: 2 }],
            },
            {
              expr: panelQuery(fleet, gpuTable, "A"),
              eval_time: "5m",
              exp_samples: [
                { labels: gpuLabels(1), value: 1 },
                { labels: gpuLabels(2), value: 1 },
              ],
            },
          ],
        },
      ],
    }
    const testFile = join(scratch, "gpu-table-test.yaml")
    writeFileSync(testFile, stringify(tests))
    const run = promtool(["test", "rules", testFile])
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0)
    expect(run.stdout).toContain("SUCCESS")
  })
})
