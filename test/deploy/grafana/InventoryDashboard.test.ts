import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import type { GpuHealth } from "../../../src/domain/GpuHealth.ts"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import * as OtlpExporter from "../../../src/exporter/otlp/OtlpExporter.ts"
import { addedEvent } from "../../exporter/InventoryEvents.ts"
import { startOtlpReceiver } from "../../exporter/otlp/OtlpReceiver.ts"
import { type DecodedResourceLogs, decodeLogsRequest } from "../../exporter/otlp/ProtobufLogsRequest.ts"
import { type DashboardQuery, queriesOf, readDashboard, withVariables } from "./GrafanaDashboard.ts"
import { logqlReferencesOf } from "./LogqlReferences.ts"
import { type LokiFields, lokiFieldsOf } from "./LokiOtlpFields.ts"

const inventory = readDashboard("inventory.json")

const ok: GpuHealth = { state: "ok", reasons: [], rmaEligible: false, vbios: "96.00.74.00.01" }
const remapPending: GpuHealth = {
  state: "degraded",
  reasons: ["row-remap-pending"],
  rmaEligible: false,
  remappedRows: { correctable: 0, uncorrectable: 1, pending: true, failure: false },
  ecc: { enabled: true, volatileUncorrectable: 1 },
  pcie: { linkWidth: { current: 16, max: 16 } },
  fabric: { state: "completed", status: "success", summary: "healthy" },
}

/** One event of each kind, with every optional field set, so the request carries every attribute the exporter has. */
const events: ReadonlyArray<InventoryEvent> = [
  addedEvent(1),
  {
    record: {
      ...addedEvent(2).record,
      event: "moved",
      chassis: "1821923000123",
      moduleId: 3,
      migMode: "Disabled",
      previousNode: "gpu-node-7",
      previousMachine: "i-0def",
      serialShared: true,
    },
    origin: addedEvent(2).origin,
  },
  { ...addedEvent(3), record: { ...addedEvent(3).record, event: "removed" } },
  { ...addedEvent(4), record: { ...addedEvent(4).record, event: "observed", health: ok } },
  {
    ...addedEvent(5),
    record: { ...addedEvent(5).record, event: "health", health: remapPending, previousHealthState: "ok" },
  },
]

/** The logs request the real otlp exporter sends for `events`, as its OTLP receiver decodes it. */
const exportedRequest = Effect.scoped(
  Effect.gen(function* () {
    const receiver = yield* startOtlpReceiver
    const exporter = yield* OtlpExporter.factory.create(
      { ...OtlpExporter.factory.defaultConfig, endpoint: receiver.url, metricsIntervalMs: 0 },
      { id: "otlp", clusterName: "prod-eu", serviceVersion: "1.2.3" },
    )
    yield* exporter.export(events)
    while ((yield* exporter.stats).sent < events.length) yield* Effect.sleep("20 millis")
    return receiver.accepted("/v1/logs").flatMap((accepted) => decodeLogsRequest(accepted.body))
  }),
)

let request: ReadonlyArray<DecodedResourceLogs> = []
let loki: LokiFields = { indexLabels: new Map(), structuredMetadata: new Map(), lines: [] }
beforeAll(async () => {
  request = await Effect.runPromise(exportedRequest)
  loki = lokiFieldsOf(request)
})

/** The LogQL recipes of docs/metrics.md: its `logql` blocks, a continuation line (two spaces in) joined to the line before. */
const logqlRecipes = (): ReadonlyArray<string> => {
  const page = readFileSync(new URL("../../../docs/metrics.md", import.meta.url), "utf8")
  const section = page.slice(page.indexOf("\n## LogQL recipes\n"), page.indexOf("\n## Dashboards\n"))
  return [...section.matchAll(/```logql\n([\s\S]*?)```/g)].flatMap(([, block = ""]) =>
    block
      .replace(/\n {2}/g, " ")
      .split("\n")
      .filter((line) => line.trim() !== ""),
  )
}

const queries = [
  ...queriesOf(inventory).map((query): DashboardQuery => ({ ...query, expr: withVariables(inventory, query.expr) })),
  ...logqlRecipes().map((expr): DashboardQuery => ({ where: "docs/metrics.md", expr })),
].map((query) => ({ ...query, references: logqlReferencesOf(query.expr) }))

/** RE2's named group syntax in JavaScript's. */
const javascriptRegExp = (re2: string): RegExp => new RegExp(re2.replaceAll("(?P<", "(?<"))

describe("deploy/grafana/inventory.json and the LogQL recipes of docs/metrics.md", () => {
  it("selects streams by index labels the exporter's resources carry, with the values it sends", () => {
    expect(loki.indexLabels.get("service_name")).toEqual(new Set([OtlpExporter.factory.defaultConfig.serviceName]))
    const wrong = queries.flatMap((query) =>
      query.references.streamMatchers
        .filter((matcher) => {
          const sent = loki.indexLabels.get(matcher.name)
          if (sent === undefined) return true
          return matcher.op === "=" && !sent.has(matcher.value)
        })
        .map((matcher) => `${matcher.name}${matcher.op}"${matcher.value}" (${query.where})`),
    )
    expect(wrong).toEqual([])
    const listed = queries.flatMap((query) => (query.listsLabel === undefined ? [] : [query.listsLabel]))
    expect(listed.filter((label) => !loki.indexLabels.has(label))).toEqual([])
  })

  it("reads only names the exporter sends, spelled as Loki stores them, or names the query makes itself", () => {
    expect(queries.length).toBeGreaterThan(8)
    expect(queries.filter((query) => query.where === "docs/metrics.md").length).toBeGreaterThan(5)
    const unknown = queries.flatMap((query) =>
      [...query.references.namesRead]
        .filter(
          (name) =>
            !loki.indexLabels.has(name) &&
            !loki.structuredMetadata.has(name) &&
            !query.references.namesCreated.has(name),
        )
        .map((name) => `${name} (${query.where})`),
    )
    expect(unknown).toEqual([])
  })

  it("compares attributes with values the exporter sends (the recipes' example serials aside)", () => {
    const wrong = queries
      .filter((query) => query.where !== "docs/metrics.md")
      .flatMap((query) =>
        query.references.labelFilters
          .filter((filter) => filter.op === "=" && filter.value !== "")
          .filter(
            (filter) =>
              !(loki.structuredMetadata.get(filter.name) ?? loki.indexLabels.get(filter.name))?.has(filter.value),
          )
          .map((filter) => `${filter.name}="${filter.value}" (${query.where})`),
      )
    expect(wrong).toEqual([])
  })

  it("filters lines with text the exporter writes for one event kind, and reads each record's kind from its line", () => {
    const records = request.flatMap((resourceLogs) => resourceLogs.logRecords)
    const lineOf = (record: (typeof records)[number]) =>
      record.body !== undefined && "string" in record.body ? record.body.string : ""
    const lineFilters = queries.flatMap((query) => query.references.lineFilters)
    expect(lineFilters.length).toBeGreaterThan(0)
    for (const filter of lineFilters) {
      expect(filter.op, filter.text).toBe("|=")
      const kinds = new Set(records.filter((record) => lineOf(record).includes(filter.text)).map((r) => r.eventName))
      expect(kinds.size, `"${filter.text}" matches the lines of ${[...kinds].join(", ") || "no event"}`).toBe(1)
    }
    const regexps = queries.flatMap((query) => query.references.regexps)
    expect(regexps.length).toBeGreaterThan(0)
    for (const pattern of regexps) {
      for (const record of records) {
        const event = javascriptRegExp(pattern).exec(lineOf(record))?.groups?.event
        expect(`gpu.inventory.${event}`, lineOf(record)).toBe(record.eventName)
      }
    }
  })

  it("defaults its service variable to the otlp exporter's service name", () => {
    const service = inventory.templating.list.find((variable) => variable.name === "service")
    expect(service?.query).toBe(OtlpExporter.factory.defaultConfig.serviceName)
  })
})
