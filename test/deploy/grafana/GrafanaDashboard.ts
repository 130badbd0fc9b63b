import { readFileSync } from "node:fs"

/** The parts of a Grafana dashboard (classic JSON model) the checks read. */
export interface DatasourceRef {
  readonly type?: string
  readonly uid?: string
}

export interface Target {
  readonly refId: string
  readonly expr: string
  readonly datasource?: DatasourceRef
}

export interface Panel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly datasource?: DatasourceRef
  readonly targets?: ReadonlyArray<Target>
  readonly panels?: ReadonlyArray<Panel>
}

export interface Variable {
  readonly name: string
  readonly type: string
  readonly query?: unknown
  readonly datasource?: DatasourceRef
  readonly includeAll?: boolean
  readonly allValue?: string
}

export interface Dashboard {
  readonly uid: string
  readonly title: string
  readonly schemaVersion: number
  readonly panels: ReadonlyArray<Panel>
  readonly templating: { readonly list: ReadonlyArray<Variable> }
}

export const dashboardPath = (name: string): URL => new URL(`../../../deploy/grafana/${name}`, import.meta.url)

export const readDashboard = (name: string): Dashboard => JSON.parse(readFileSync(dashboardPath(name), "utf8"))

/** Every panel, those inside rows included. */
export const panelsOf = (dashboard: Dashboard): ReadonlyArray<Panel> =>
  dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])

/** One query of the dashboard: a panel's target, or the series selector of a `label_values` variable. */
export interface DashboardQuery {
  /** Where it is, for messages: the panel title and refId, or the variable. */
  readonly where: string
  readonly expr: string
  /** The label a `label_values` variable lists; absent for panel queries. */
  readonly listsLabel?: string
}

const labelValues = /^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\)$/s

export const queriesOf = (dashboard: Dashboard): ReadonlyArray<DashboardQuery> => {
  const targets = panelsOf(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr })),
  )
  const variables = dashboard.templating.list
    .filter((variable) => variable.type === "query")
    .map((variable) => {
      const match = typeof variable.query === "string" ? labelValues.exec(variable.query) : null
      if (match?.[1] === undefined || match[2] === undefined) {
        throw new Error(`variable ${variable.name}: expected label_values(<selector>, <label>), got ${variable.query}`)
      }
      return { where: `variable ${variable.name}`, expr: match[1], listsLabel: match[2] }
    })
  return [...targets, ...variables]
}

/** Values Grafana gives its own variables; any value of the right shape serves a syntax check. */
const builtinValues: Readonly<Record<string, string>> = {
  __rate_interval: "5m",
  __interval: "1m",
  __auto: "1m",
  __range: "6h",
}

/**
 * The query as Grafana sends it: `$name`, `${name}` and `${name:format}` replaced by the variable's
 * "All" value (query variables) or its default (textboxes). A name the dashboard does not define fails.
 */
export const withVariables = (dashboard: Dashboard, expr: string): string =>
  expr.replace(/\$\{([A-Za-z_]\w*)(?::\w+)?\}|\$([A-Za-z_]\w*)/g, (reference, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? ""
    const builtin = builtinValues[name]
    if (builtin !== undefined) return builtin
    const variable = dashboard.templating.list.find((candidate) => candidate.name === name)
    if (variable?.type === "query" && variable.includeAll === true && variable.allValue !== undefined) {
      return variable.allValue
    }
    if (variable?.type === "textbox" && typeof variable.query === "string") return variable.query
    throw new Error(`${reference} in ${expr} is not a variable of ${dashboard.uid} with an All value or a default`)
  })
