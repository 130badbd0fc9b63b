import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { dashboardPath, panelsOf, queriesOf, readDashboard, withVariables } from "./GrafanaDashboard.ts"

/**
 * The last schema version of Grafana's classic dashboard JSON (the v1 dashboard API), which Grafana 12
 * and 13 write when they save or export one; an older version makes Grafana migrate it on every load.
 */
const currentSchemaVersion = 42

/** How a panel, query or variable names the data source: Grafana's reference to the `datasource` variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JavaScript template
const datasourceVariable = "${datasource}"

/** Every value under `key`, wherever it is in the dashboard, with its JSON path. */
const valuesUnder = (key: string, node: unknown, path = "$"): ReadonlyArray<{ path: string; value: unknown }> => {
  if (Array.isArray(node)) return node.flatMap((child, index) => valuesUnder(key, child, `${path}[${index}]`))
  if (node === null || typeof node !== "object") return []
  return Object.entries(node).flatMap(([name, child]) => [
    ...(name === key ? [{ path: `${path}.${name}`, value: child }] : []),
    ...valuesUnder(key, child, `${path}.${name}`),
  ])
}

describe.each([
  { file: "fleet.json", datasource: "prometheus" },
  { file: "inventory.json", datasource: "loki" },
])("deploy/grafana/$file", ({ file, datasource }) => {
  const dashboard = readDashboard(file)

  it("is dashboard JSON of the current schema version with a stable uid", () => {
    expect(() => JSON.parse(readFileSync(dashboardPath(file), "utf8"))).not.toThrow()
    expect(dashboard.schemaVersion).toBe(currentSchemaVersion)
    expect(dashboard.uid).toMatch(/^gpu-serials-[a-z]+$/)
    expect(dashboard.title).toMatch(/^gpu-serials: /)
    const ids = panelsOf(dashboard).map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    const titles = panelsOf(dashboard).map((panel) => panel.title)
    expect(new Set(titles).size).toBe(titles.length)
  })

  it(`picks its ${datasource} data source from a variable, and names no data source uid`, () => {
    const variable = dashboard.templating.list.find((candidate) => candidate.type === "datasource")
    expect(variable).toMatchObject({ name: "datasource", query: datasource })
    const references = valuesUnder("datasource", dashboard)
    expect(references.length).toBeGreaterThan(panelsOf(dashboard).length)
    const otherReferences = references.filter(
      ({ value }) => JSON.stringify(value) !== JSON.stringify({ type: datasource, uid: datasourceVariable }),
    )
    expect(otherReferences).toEqual([])
    const hardCoded = valuesUnder("uid", dashboard).filter(
      ({ path, value }) => path !== "$.uid" && value !== datasourceVariable,
    )
    expect(hardCoded).toEqual([])
  })

  it("gives every panel but the rows a query, and uses only variables it defines", () => {
    const panels = panelsOf(dashboard).filter((panel) => panel.type !== "row")
    expect(panels.filter((panel) => (panel.targets ?? []).length === 0).map((panel) => panel.title)).toEqual([])
    for (const query of queriesOf(dashboard)) expect(() => withVariables(dashboard, query.expr)).not.toThrow()
    for (const panel of panelsOf(dashboard)) expect(() => withVariables(dashboard, panel.title)).not.toThrow()
  })
})
