import { spawnSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { parse, parseAllDocuments, stringify } from "yaml"
import { metricNames } from "../../src/metrics/ServiceInstruments.ts"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"
import { promqlRecipes } from "./MetricsRecipes.ts"

const component = "deploy/components/prometheus-operator"
const overlay = "deploy/examples/prometheus-operator"
const unitTests = join(repositoryRoot, component, "tests")
const rulesFileName = "gpu-serials.rules.yaml"

interface Rule {
  readonly alert: string
  readonly expr: string
  readonly for?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
}

interface Manifest {
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> }
  readonly spec?: unknown
}

interface PrometheusRuleSpec {
  readonly groups: ReadonlyArray<{ readonly name: string; readonly rules: ReadonlyArray<Rule> }>
}

interface ServiceMonitorSpec {
  readonly selector: { readonly matchLabels: Readonly<Record<string, string>> }
  readonly namespaceSelector?: { readonly matchNames?: ReadonlyArray<string> }
  readonly endpoints: ReadonlyArray<{ readonly port: string; readonly path?: string }>
}

interface ServiceSpec {
  readonly ports: ReadonlyArray<{ readonly name: string }>
}

const manifests = (() => {
  const run = spawnSync("kubectl", ["kustomize", overlay], { cwd: repositoryRoot, encoding: "utf8", timeout: 20_000 })
  if (run.status !== 0) throw new Error(`kubectl kustomize ${overlay} failed: ${run.stderr}`)
  return parseAllDocuments(run.stdout).map((document) => document.toJS() as Manifest)
})()

const only = (kind: string): Manifest => {
  const found = manifests.filter((manifest) => manifest.kind === kind)
  expect(found, kind).toHaveLength(1)
  return found[0] as Manifest
}

const ruleSpec = only("PrometheusRule").spec as PrometheusRuleSpec
const rules = ruleSpec.groups.flatMap((group) => group.rules)

/** The rule's groups as a Prometheus rules file, beside copies of the unit tests that name it. */
const workspace = mkdtempSync(join(tmpdir(), "gpu-serials-rules-"))
writeFileSync(join(workspace, rulesFileName), stringify({ groups: ruleSpec.groups }))
const testFiles = readdirSync(unitTests).filter((name) => name.endsWith(".yaml"))
for (const name of testFiles) copyFileSync(join(unitTests, name), join(workspace, name))
afterAll(() => rmSync(workspace, { recursive: true, force: true }))

const metricsPage = readFileSync(join(repositoryRoot, "docs/metrics.md"), "utf8")

const promtool = (args: ReadonlyArray<string>) => {
  const run = spawnSync("/usr/bin/promtool", args, { cwd: workspace, encoding: "utf8", timeout: 60_000 })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

/** What a PromQL expression names: metrics, and labels (in matchers and in by/on/without/ignoring/group lists). */
const namesIn = (expr: string): { readonly metrics: ReadonlySet<string>; readonly labels: ReadonlySet<string> } => {
  const labels = new Set<string>()
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  rest = rest.replace(/\b(?:by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_list, names: string) => {
    for (const name of names.split(",")) if (name.trim() !== "") labels.add(name.trim())
    return " "
  })
  rest = rest.replace(/\{([^}]*)\}/g, (_matchers, matchers: string) => {
    for (const [, name] of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.add(name ?? "")
    return " "
  })
  rest = rest.replace(/\[[^\]]*\]/g, " ").replace(/\boffset\s+\w+/g, " ")
  const keywords = new Set(["and", "or", "unless", "bool"])
  const metrics = new Set<string>()
  for (const match of rest.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name = "", call] = match
    if (call === undefined && !keywords.has(name)) metrics.add(name)
  }
  return { metrics, labels }
}

/** Labels the service's series carry (docs/metrics.md), and those a ServiceMonitor scrape adds. */
const serviceLabels = [
  "kind",
  "exporter",
  "error_kind",
  "result",
  "reason",
  "model",
  "resource",
  "leading",
  "label",
  "state",
  // gpu_serials_gpu_info's, which the per-GPU health series carry too.
  "UUID",
  "pci_bus_id",
  "modelName",
  "Hostname",
  "serial",
  "chassis",
  "cluster",
]
const targetLabels = ["namespace", "job"]

describe("the prometheus-operator component", () => {
  it("passes promtool check rules", () => {
    const check = promtool(["check", "rules", rulesFileName])
    expect(check.output).toContain(`SUCCESS: ${rules.length} rules found`)
    expect(check.status).toBe(0)
  })

  it("passes every promtool unit test of the rules", () => {
    expect(testFiles.length).toBeGreaterThan(0)
    const test = promtool(["test", "rules", ...testFiles])
    expect(test.output).not.toContain("FAILED")
    expect(test.status).toBe(0)
  })

  it("alerts on a GPU removed or moved, a board to return, a GPU not healthy for an hour, failing readings, no reading, dropped records and the leader missing", () => {
    expect(rules.map((rule) => rule.alert)).toEqual([
      "GpuSerialsGpuRemoved",
      "GpuSerialsGpuMoved",
      "GpuRmaEligible",
      "GpuDegraded",
      "GpuSerialsNodeReadingsFailing",
      "GpuSerialsNoSuccessfulReading",
      "GpuSerialsNoReadingSinceLeading",
      "GpuSerialsExporterDroppingRecords",
      "GpuSerialsLeaderMissing",
      "GpuSerialsAbsent",
    ])
  })

  it("gives each alert a severity, a summary, a description and a for: duration", () => {
    for (const rule of rules) {
      expect(["info", "warning", "critical"], rule.alert).toContain(rule.labels?.severity)
      expect(rule.annotations?.summary, rule.alert).toMatch(/\S/)
      expect(rule.annotations?.description?.length ?? 0, rule.alert).toBeGreaterThan(80)
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/)
      // Pods come and go: an operator is pointed at labels of the metrics, never at a pod.
      expect(JSON.stringify(rule.annotations), rule.alert).not.toContain("$labels.pod")
    }
  })

  it("names only metrics /metrics exposes and labels its series carry", () => {
    const exposed = new Set<string>(Object.values(metricNames))
    for (const rule of rules) {
      const { metrics, labels } = namesIn(rule.expr)
      expect(metrics.size, rule.alert).toBeGreaterThan(0)
      for (const metric of metrics) expect(exposed, `${rule.alert}: ${metric}`).toContain(metric)
      for (const label of labels)
        expect([...serviceLabels, ...targetLabels], `${rule.alert}: ${label}`).toContain(label)
    }
  })

  it("has unit tests in which each alert fires, and cases in which it must not", () => {
    const cases = testFiles.flatMap((name) => {
      const file = parse(readFileSync(join(unitTests, name), "utf8")) as {
        readonly rule_files: ReadonlyArray<string>
        readonly tests: ReadonlyArray<{
          readonly alert_rule_test?: ReadonlyArray<{ alertname: string; exp_alerts: ReadonlyArray<unknown> }>
        }>
      }
      expect(file.rule_files).toEqual([rulesFileName])
      return file.tests.flatMap((test) => test.alert_rule_test ?? [])
    })
    for (const { alert } of rules) {
      const tested = cases.filter((each) => each.alertname === alert)
      expect(
        tested.some((each) => each.exp_alerts.length > 0),
        `${alert} fires`,
      ).toBe(true)
      expect(
        tested.some((each) => each.exp_alerts.length === 0),
        `${alert} stays quiet`,
      ).toBe(true)
    }
  })

  it("scrapes the Service's metrics port in the service's namespace", () => {
    const service = only("Service")
    const monitor = only("ServiceMonitor")
    const spec = monitor.spec as ServiceMonitorSpec
    const ports = (service.spec as ServiceSpec).ports.map((port) => port.name)
    expect(spec.endpoints.map((endpoint) => [endpoint.port, endpoint.path])).toEqual([[ports[0], "/metrics"]])
    expect(Object.entries(spec.selector.matchLabels).length).toBeGreaterThan(0)
    for (const [key, value] of Object.entries(spec.selector.matchLabels)) {
      expect(service.metadata.labels?.[key], key).toBe(value)
    }
    expect(spec.namespaceSelector?.matchNames).toEqual([service.metadata.namespace])
    expect(monitor.metadata.namespace).toBe(service.metadata.namespace)
    expect(only("PrometheusRule").metadata.namespace).toBe(service.metadata.namespace)
    // A ServiceMonitor's job label is the Service's name, which the absence rule names.
    const absence = rules.find((rule) => rule.alert === "GpuSerialsAbsent")
    expect(absence?.expr).toContain(`job="${service.metadata.name}"`)
  })

  it("runs every PromQL recipe of docs/metrics.md in its unit tests", () => {
    const recipes = promqlRecipes()
    expect(recipes.length).toBeGreaterThan(5)
    const tested = testFiles.flatMap((name) => {
      const file = parse(readFileSync(join(unitTests, name), "utf8")) as {
        readonly tests: ReadonlyArray<{ readonly promql_expr_test?: ReadonlyArray<{ readonly expr: string }> }>
      }
      return file.tests.flatMap((test) => (test.promql_expr_test ?? []).map((each) => each.expr))
    })
    for (const recipe of recipes) expect(tested, recipe).toContain(recipe)
    for (const recipe of recipes) {
      for (const metric of namesIn(recipe).metrics) {
        if (!metric.startsWith("DCGM_")) expect(Object.values(metricNames), recipe).toContain(metric)
      }
    }
  })

  it("is listed in docs/metrics.md with every alert and the command that applies it", () => {
    expect(metricsPage).toContain(`kubectl apply -k ${overlay}`)
    for (const { alert } of rules) expect(metricsPage).toContain(`\`${alert}\``)
  })
})
