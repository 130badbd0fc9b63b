import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseAllDocuments, stringify } from "yaml"
import { freePort } from "../../src/health/FreePort.ts"
import { type RunningCli, repositoryRoot, startGpuSerials } from "../cli/GpuSerialsCli.ts"
import { type Dashboard, panelsOf, queriesOf, readDashboard, withVariables } from "./grafana/GrafanaDashboard.ts"
import { promqlRecipes } from "./MetricsRecipes.ts"

/**
 * A real Prometheus (Debian's `prometheus`, the server beside promtool) scraping a `gpu-serials demo` run
 * and a static dcgm-exporter page: the target is up, the shipped alert rules load and evaluate, every
 * PromQL query of the Prometheus dashboards and of docs/metrics.md runs, and the fleet dashboard's DCGM
 * join has rows. promtool's unit tests (PrometheusRule.test.ts, the dashboard tests) check the values.
 */

const scrapeSeconds = 1
const workspace = mkdtempSync(join(tmpdir(), "gpu-serials-prometheus-"))

interface PrometheusAnswer<T> {
  readonly status: "success" | "error"
  readonly data: T
  readonly error?: string
}

interface RuleState {
  readonly name: string
  readonly health: string
  readonly lastError?: string
  readonly lastEvaluation: string
}

/** The dashboards whose data source is Prometheus. */
const prometheusDashboards: ReadonlyArray<Dashboard> = readdirSync(join(repositoryRoot, "deploy/grafana"))
  .filter((name) => name.endsWith(".json"))
  .map(readDashboard)
  .filter((dashboard) =>
    dashboard.templating.list.some((variable) => variable.type === "datasource" && variable.query === "prometheus"),
  )

/** The shipped alert rules (the prometheus-operator component's PrometheusRule) as a Prometheus rules file. */
const shippedRules = (): unknown => {
  const overlay = "deploy/examples/prometheus-operator"
  const run = spawnSync("kubectl", ["kustomize", overlay], { cwd: repositoryRoot, encoding: "utf8", timeout: 20_000 })
  if (run.status !== 0) throw new Error(`kubectl kustomize ${overlay} failed: ${run.stderr}`)
  const rule = parseAllDocuments(run.stdout)
    .map((document) => document.toJS() as { readonly kind: string; readonly spec?: { readonly groups: unknown } })
    .find((manifest) => manifest.kind === "PrometheusRule")
  if (rule?.spec === undefined) throw new Error(`${overlay} renders no PrometheusRule`)
  return { groups: rule.spec.groups }
}

/** Polls `read` every 250 ms until it gives a value, failing with `what` after `timeoutMs`. */
const eventually = async <A>(what: string, read: () => Promise<A | undefined>, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await read()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`timed out waiting until ${what}${last === undefined ? "" : `: ${String(last)}`}`)
}

let demo: RunningCli | undefined
let dcgm: Server | undefined
let prometheus: ChildProcess | undefined
let prometheusUrl = ""
let prometheusLog = ""

const api = async <T>(path: string): Promise<PrometheusAnswer<T>> => {
  const answer = await fetch(`${prometheusUrl}${path}`, { signal: AbortSignal.timeout(10_000) })
  return (await answer.json()) as PrometheusAnswer<T>
}

const query = (expr: string) =>
  api<{ readonly result: ReadonlyArray<{ readonly metric: Record<string, string> }> }>(
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  )

/** dcgm-exporter's page for the GPUs the demo knows: the series the fleet dashboard joins on UUID. */
const dcgmPage = (infoLines: ReadonlyArray<string>): string => {
  const label = (line: string, name: string) => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? ""
  const lines = infoLines.flatMap((line, index) => {
    const labels = `gpu="${index % 8}",UUID="${label(line, "UUID")}",pci_bus_id="${label(line, "pci_bus_id")}",Hostname="${label(line, "Hostname")}",modelName="${label(line, "modelName")}"`
    // The first GPU's row remap failed, as DCGM sees it: the health recipes cross-check it.
    return [
      `DCGM_FI_DEV_GPU_TEMP{${labels}} 61`,
      `DCGM_FI_DEV_GPU_UTIL{${labels}} 87`,
      `DCGM_FI_DEV_ROW_REMAP_FAILURE{${labels}} ${index === 0 ? 1 : 0}`,
    ]
  })
  return [
    "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).",
    "# TYPE DCGM_FI_DEV_GPU_TEMP gauge",
    ...lines.filter((line) => line.startsWith("DCGM_FI_DEV_GPU_TEMP")),
    "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge",
    ...lines.filter((line) => line.startsWith("DCGM_FI_DEV_GPU_UTIL")),
    "# HELP DCGM_FI_DEV_ROW_REMAP_FAILURE Whether remapping of rows has failed.",
    "# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge",
    ...lines.filter((line) => line.startsWith("DCGM_FI_DEV_ROW_REMAP_FAILURE")),
    "",
  ].join("\n")
}

beforeAll(async () => {
  // Health faults, so the health series and the suspects' joins have GPUs that are not ok.
  const started = startGpuSerials(["demo", "--duration", "5m", "--fault-health", "1"])
  demo = started
  const metricsUrl = await eventually(
    "the demo says where its metrics are",
    async () => /health and metrics at (http:\/\/\S+\/metrics)/.exec(started.stderr())?.[1],
  )
  const infoLines = await eventually("the demo knows its GPUs", async () => {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text()
    const lines = text.split("\n").filter((line) => line.startsWith("gpu_serials_gpu_info{"))
    return lines.length > 20 ? lines : undefined
  })

  const page = dcgmPage(infoLines)
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/plain; version=0.0.4" })
    response.end(page)
  })
  dcgm = server
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const dcgmTarget = `127.0.0.1:${(server.address() as AddressInfo).port}`

  writeFileSync(join(workspace, "rules.yaml"), stringify(shippedRules()))
  writeFileSync(
    join(workspace, "prometheus.yaml"),
    stringify({
      global: { scrape_interval: `${scrapeSeconds}s`, evaluation_interval: `${scrapeSeconds}s` },
      rule_files: [join(workspace, "rules.yaml")],
      scrape_configs: [
        { job_name: "gpu-serials", static_configs: [{ targets: [new URL(metricsUrl).host] }] },
        { job_name: "dcgm-exporter", static_configs: [{ targets: [dcgmTarget] }] },
      ],
    }),
  )
  const port = await freePort()
  prometheusUrl = `http://127.0.0.1:${port}`
  const child = spawn(
    "prometheus",
    [
      `--config.file=${join(workspace, "prometheus.yaml")}`,
      `--storage.tsdb.path=${join(workspace, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  )
  prometheus = child
  child.stdout?.on("data", (chunk: Buffer) => {
    prometheusLog += chunk.toString()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    prometheusLog += chunk.toString()
  })
  await eventually(
    "Prometheus is ready",
    async () => ((await fetch(`${prometheusUrl}/-/ready`)).status === 200 ? true : undefined),
    30_000,
  )
}, 120_000)

afterAll(async () => {
  prometheus?.kill("SIGTERM")
  demo?.child.kill("SIGTERM")
  await demo?.exited
  dcgm?.close()
  rmSync(workspace, { recursive: true, force: true })
})

describe("a real Prometheus scraping a gpu-serials demo", () => {
  it("scrapes the service: its target and the DCGM target are up", async () => {
    const targets = await eventually("both targets were scraped", async () => {
      const answer = await api<{
        readonly activeTargets: ReadonlyArray<{ readonly health: string; readonly labels: Record<string, string> }>
      }>("/api/v1/targets")
      const active = answer.data.activeTargets
      return active.length === 2 && active.every((target) => target.health !== "unknown") ? active : undefined
    })
    expect(targets.map((target) => [target.labels.job, target.health]).sort(), prometheusLog).toEqual([
      ["dcgm-exporter", "up"],
      ["gpu-serials", "up"],
    ])
  }, 60_000)

  it("loads the shipped alert rules and evaluates every one without error", async () => {
    const rules = await eventually("every rule was evaluated", async () => {
      const answer = await api<{ readonly groups: ReadonlyArray<{ readonly rules: ReadonlyArray<RuleState> }> }>(
        "/api/v1/rules",
      )
      const all = answer.data.groups.flatMap((group) => group.rules)
      return all.length > 0 && all.every((rule) => !rule.lastEvaluation.startsWith("0001-")) ? all : undefined
    })
    expect(rules.length).toBeGreaterThan(5)
    expect(
      rules
        .filter((rule) => rule.health !== "ok")
        .map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ""}`),
      prometheusLog,
    ).toEqual([])
  }, 60_000)

  it("runs every PromQL query of the Prometheus dashboards and of docs/metrics.md without error", async () => {
    const dashboardQueries = prometheusDashboards.flatMap((dashboard) =>
      queriesOf(dashboard).map((each) => ({
        where: `${dashboard.uid}: ${each.where}`,
        expr: withVariables(dashboard, each.expr),
      })),
    )
    const recipes = promqlRecipes().map((expr) => ({ where: "docs/metrics.md", expr }))
    expect(dashboardQueries.length).toBeGreaterThan(20)
    expect(recipes.length).toBeGreaterThan(5)
    const failed: Array<string> = []
    for (const each of [...dashboardQueries, ...recipes]) {
      const answer = await query(each.expr)
      if (answer.status !== "success") failed.push(`${each.where}: ${each.expr}: ${answer.error ?? "failed"}`)
    }
    expect(failed).toEqual([])
  }, 60_000)

  it("has the health of every GPU the demo knows, the states adding up to them, and the suspects' reasons", async () => {
    const withoutHealth = await eventually("the GPUs are scraped", async () => {
      const known = await query("gpu_serials_gpu_info")
      const answer = await query("gpu_serials_gpu_info unless on (UUID) gpu_serials_gpu_health")
      return known.data.result.length > 20 && answer.status === "success" ? answer.data.result : undefined
    })
    expect(withoutHealth.map((row) => row.metric.UUID)).toEqual([])
    const miscounted = await query("sum(gpu_serials_gpus_by_health) != count(gpu_serials_gpu_health)")
    expect(miscounted.data.result).toEqual([])
    // --fault-health 1 turns GPUs degraded or failed within the first minute: the suspects table has rows.
    const fleet = readDashboard("fleet.json")
    const suspects = panelsOf(fleet)
      .find((panel) => panel.title === "Suspects")
      ?.targets?.find((target) => target.refId === "A")
    const rows = await eventually("a GPU is not ok", async () => {
      const answer = await query(withVariables(fleet, suspects?.expr ?? ""))
      return answer.status === "success" && answer.data.result.length > 0 ? answer.data.result : undefined
    })
    expect(rows.every((row) => row.metric.serial !== undefined && row.metric.reason !== undefined)).toBe(true)
  }, 90_000)

  it("joins DCGM's series on UUID: the fleet dashboard's GPU table has DCGM readings for the demo's GPUs", async () => {
    const fleet = readDashboard("fleet.json")
    const panel = panelsOf(fleet).find((candidate) => candidate.title === "GPUs and their DCGM readings")
    const temperature = panel?.targets?.find((target) => target.refId === "B")
    expect(temperature).toBeDefined()
    const rows = await eventually("the join has rows", async () => {
      const answer = await query(withVariables(fleet, temperature?.expr ?? ""))
      return answer.status === "success" && answer.data.result.length > 20 ? answer.data.result : undefined
    })
    expect(rows.every((row) => (row.metric.UUID ?? "").startsWith("GPU-") && row.metric.Hostname !== undefined)).toBe(
      true,
    )
  }, 60_000)
})
