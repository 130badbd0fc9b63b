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

/**
 * Series gpu-serials writes only for GPUs in that condition: a demo run may have no GPU with a reason, or
 * none to return, by the time it is scraped.
 */
const conditionalMetrics = new Set(["gpu_serials_gpu_health_reason", "gpu_serials_gpu_rma_eligible"])

/** The table of every GPU, joined with DCGM. */
const gpuTable = "GPUs and their DCGM readings"

/** The table of the GPUs that are not ok. */
const suspectsTable = "Suspects"

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
    // The simulated GPUs report their condition, so the demo has a health series for each.
    expect(exposed).toContain("gpu_serials_gpu_health")
    const missing = queries.flatMap((query) =>
      [...metricNamesOf(query.expr)]
        .filter((name) => !exposed.has(name) && !dcgmMetrics.has(name) && !conditionalMetrics.has(name))
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
  it("lists in Suspects each GPU that is not ok, one row per reason, with its serial, node, chassis, state and RMA mark", () => {
    const labels = (n: number, node: string, chassis: string) =>
      `UUID="GPU-${n}", pci_bus_id="00000000:1B:00.0", modelName="NVIDIA GB200", Hostname="${node}", serial="165000000000${n}", chassis="${chassis}", cluster="prod-eu"`
    const replica = (instance: string) => `job="gpu-serials", instance="${instance}"`
    const series = (metric: string, selector: string, instance: string) =>
      `${metric}{${selector}, ${replica(instance)}}`
    const reason = (n: number, code: string, instance: string) =>
      series("gpu_serials_gpu_health_reason", `UUID="GPU-${n}", reason="${code}"`, instance)
    const row = (n: number, node: string, chassis: string, code: string) =>
      `{UUID="GPU-${n}", modelName="NVIDIA GB200", Hostname="${node}", serial="165000000000${n}", cluster="prod-eu"${chassis === "" ? "" : `, chassis="${chassis}"`}, reason="${code}"}`
    // GPU 1 failed (row remap failure, a board to return) on a tray; GPU 2 degraded; GPU 3 ok. Both
    // replicas of an HA pair were scraped while they handed over, so each series comes twice.
    const input = ["10.0.0.1:8080", "10.0.0.2:8080"].flatMap((instance) => [
      { series: series("gpu_serials_gpu_health", labels(1, "gb-node-1", "1821225190819"), instance), values: "2x10" },
      {
        series: series("gpu_serials_gpu_rma_eligible", labels(1, "gb-node-1", "1821225190819"), instance),
        values: "1x10",
      },
      { series: reason(1, "row-remap-failure", instance), values: "1x10" },
      { series: reason(1, "row-remap-pending", instance), values: "1x10" },
      { series: series("gpu_serials_gpu_health", labels(2, "gb-node-2", ""), instance), values: "1x10" },
      { series: reason(2, "pcie-width-reduced", instance), values: "1x10" },
      { series: series("gpu_serials_gpu_health", labels(3, "gb-node-2", ""), instance), values: "0x10" },
    ])
    const byHealth = ["10.0.0.1:8080", "10.0.0.2:8080"].flatMap((instance, follower) =>
      (["ok", "degraded", "failed"] as const).map((state) => ({
        series: series("gpu_serials_gpus_by_health", `state="${state}"`, instance),
        values: `${follower === 1 ? 0 : 1}x10`,
      })),
    )
    const tests = {
      rule_files: [],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          input_series: [...input, ...byHealth],
          promql_expr_test: [
            {
              expr: panelQuery(fleet, suspectsTable, "A"),
              eval_time: "5m",
              exp_samples: [
                { labels: row(1, "gb-node-1", "1821225190819", "row-remap-failure"), value: 2 },
                { labels: row(1, "gb-node-1", "1821225190819", "row-remap-pending"), value: 2 },
                { labels: row(2, "gb-node-2", "", "pcie-width-reduced"), value: 1 },
              ],
            },
            {
              expr: panelQuery(fleet, suspectsTable, "B"),
              eval_time: "5m",
              exp_samples: [
                { labels: row(1, "gb-node-1", "1821225190819", "row-remap-failure"), value: 1 },
                { labels: row(1, "gb-node-1", "1821225190819", "row-remap-pending"), value: 1 },
              ],
            },
            {
              expr: panelQuery(fleet, "GPUs by health", "A"),
              eval_time: "5m",
              exp_samples: [
                { labels: '{state="ok"}', value: 1 },
                { labels: '{state="degraded"}', value: 1 },
                { labels: '{state="failed"}', value: 1 },
              ],
            },
          ],
        },
      ],
    }
    const testFile = join(scratch, "suspects-test.yaml")
    writeFileSync(testFile, stringify(tests))
    const run = promtool(["test", "rules", testFile])
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0)
    expect(run.stdout).toContain("SUCCESS")
  })
})
