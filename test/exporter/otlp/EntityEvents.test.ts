import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { EntityEventForm, OtlpExporterConfig } from "../../../src/exporter/otlp/OtlpConfig.ts"
import * as OtlpExporter from "../../../src/exporter/otlp/OtlpExporter.ts"
import type { Exporter } from "../../../src/pipeline/Exporter.ts"
import { addedEvent } from "../InventoryEvents.ts"
import { decodeJsonLogsRequest } from "./JsonLogsRequest.ts"
import { type OtlpReceiver, startOtlpReceiver } from "./OtlpReceiver.ts"
import {
  type DecodedLogRecord,
  type DecodedScopeLogs,
  type DecodedValue,
  decodeLogsRequest,
} from "./ProtobufLogsRequest.ts"

const settings = { id: "otlp", clusterName: "prod-eu", serviceVersion: "1.2.3" }
const hour = 3_600_000

const configFor = (
  receiver: OtlpReceiver,
  entityEvents: EntityEventForm,
  overrides: Partial<OtlpExporterConfig> = {},
): OtlpExporterConfig => ({
  ...OtlpExporter.factory.defaultConfig,
  endpoint: receiver.url,
  metricsIntervalMs: 0,
  entityEvents,
  ...overrides,
})

const str = (value: string): DecodedValue => ({ string: value })
const map = (entries: Record<string, DecodedValue>): DecodedValue => ({ kvlist: new Map(Object.entries(entries)) })

/** A GB200 GPU of a tray, as the inventory announces it: chassis, node UID and the report interval. */
const trayGpu = (event: InventoryEvent["record"]["event"]): InventoryEvent => {
  const base = addedEvent(2)
  return {
    ...base,
    record: { ...base.record, event, chassis: "1821923000123", product: "NVIDIA GB200" },
    reportIntervalMs: hour,
  }
}

const sentAll = (exporter: Exporter, count: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    while ((yield* exporter.stats).sent < count) yield* Effect.sleep("20 millis")
  })

const scopesOf = (receiver: OtlpReceiver, decode = decodeLogsRequest): ReadonlyArray<DecodedScopeLogs> =>
  receiver
    .accepted("/v1/logs")
    .flatMap((request) => decode(request.body))
    .flatMap((logs) => logs.scopes)

const entityRecords = (scopes: ReadonlyArray<DecodedScopeLogs>): ReadonlyArray<DecodedLogRecord> =>
  scopes.filter((scope) => scope.name === "gpu-serials/entities").flatMap((scope) => scope.logRecords)

/** Sends `events` through an `otlp` exporter with entity events in `form`; answers what the receiver decoded. */
const sent = (form: EntityEventForm, events: ReadonlyArray<InventoryEvent>, protocol?: "http/json") =>
  Effect.gen(function* () {
    const receiver = yield* startOtlpReceiver
    const exporter = yield* OtlpExporter.factory.create(
      configFor(receiver, form, protocol === undefined ? {} : { protocol }),
      settings,
    )
    yield* exporter.export(events)
    yield* sentAll(exporter, events.length)
    return scopesOf(receiver, protocol === undefined ? decodeLogsRequest : decodeJsonLogsRequest)
  })

describe("otlp exporter: GPUs as OpenTelemetry entities", () => {
  it.live("sends none when off, the default: only the GPU events' log records", () =>
    Effect.gen(function* () {
      assert.strictEqual(OtlpExporter.factory.defaultConfig.entityEvents, "off")
      const scopes = yield* sent("off", [trayGpu("added"), trayGpu("removed")])
      assert.deepStrictEqual(entityRecords(scopes), [])
      assert.strictEqual(
        scopes.flatMap((scope) => scope.logRecords).filter((record) => record.eventName.startsWith("gpu.inventory."))
          .length,
        2,
      )
    }).pipe(Effect.scoped),
  )

  it.live(
    "legacy: an entity_state per added, moved and observed GPU and an entity_delete per removed one, as the Collector reads them",
    () =>
      Effect.gen(function* () {
        const scopes = yield* sent("legacy", [
          trayGpu("added"),
          trayGpu("moved"),
          trayGpu("observed"),
          trayGpu("removed"),
        ])
        const entityScopes = scopes.filter((scope) => scope.name === "gpu-serials/entities")
        assert.isAbove(entityScopes.length, 0)
        for (const scope of entityScopes) {
          assert.deepStrictEqual(scope.attributes.get("otel.entity.event_as_log"), { bool: true })
        }
        const records = entityRecords(scopes)
        assert.deepStrictEqual(
          records.map((record) => record.attributes.get("otel.entity.event.type")),
          [str("entity_state"), str("entity_state"), str("entity_state"), str("entity_delete")],
        )
        const uuid = trayGpu("added").record.uuid
        for (const record of records) {
          assert.deepStrictEqual(record.attributes.get("otel.entity.type"), str("hw.gpu"))
          assert.deepStrictEqual(record.attributes.get("otel.entity.id"), map({ "hw.id": str(uuid) }))
          assert.strictEqual(record.eventName, "")
        }
        const [state] = records
        assert.deepStrictEqual(state?.attributes.get("otel.entity.interval"), { int: BigInt(hour) })
        const described = state?.attributes.get("otel.entity.attributes")
        assert.isDefined(described)
        const description = described !== undefined && "kvlist" in described ? described.kvlist : new Map()
        assert.deepStrictEqual(description.get("hw.serial_number"), str(trayGpu("added").record.gpu))
        assert.deepStrictEqual(description.get("hw.model"), str("NVIDIA GB200"))
        assert.deepStrictEqual(description.get("hw.parent"), str("1821923000123"))
        assert.deepStrictEqual(description.get("nvidia.gpu.pci_bus_id"), str("00000000:1B:00.0"))
        assert.isFalse(description.has("hw.id"))
        assert.isFalse((records[3]?.attributes ?? new Map()).has("otel.entity.attributes"))
      }).pipe(Effect.scoped),
  )

  it.live(
    "spec: entity.state with description, relationships to its tray and its node and the report interval; entity.delete",
    () =>
      Effect.gen(function* () {
        const records = entityRecords(yield* sent("spec", [trayGpu("added"), trayGpu("removed")]))
        assert.deepStrictEqual(
          records.map((record) => record.eventName),
          ["entity.state", "entity.delete"],
        )
        const uuid = trayGpu("added").record.uuid
        const [state, deleted] = records
        assert.deepStrictEqual(state?.attributes.get("entity.type"), str("hw.gpu"))
        assert.deepStrictEqual(state?.attributes.get("entity.id"), map({ "hw.id": str(uuid) }))
        assert.deepStrictEqual(state?.attributes.get("entity.report.interval"), { int: 3600n })
        assert.deepStrictEqual(state?.attributes.get("entity.relationships"), {
          array: [
            map({
              "relationship.type": str("part_of"),
              "entity.type": str("hw.enclosure"),
              "entity.id": map({ "hw.id": str("1821923000123") }),
            }),
            map({
              "relationship.type": str("attached_to"),
              "entity.type": str("k8s.node"),
              "entity.id": map({ "k8s.node.uid": str("uid-2") }),
            }),
          ],
        })
        const described = state?.attributes.get("entity.description")
        assert.isTrue(described !== undefined && "kvlist" in described && described.kvlist.has("hw.serial_number"))
        assert.deepStrictEqual(deleted?.attributes.get("entity.type"), str("hw.gpu"))
        assert.deepStrictEqual(deleted?.attributes.get("entity.id"), map({ "hw.id": str(uuid) }))
        assert.deepStrictEqual(deleted?.attributes.get("entity.delete.reason"), str("removed"))
        assert.isFalse((deleted?.attributes ?? new Map()).has("entity.description"))
      }).pipe(Effect.scoped),
  )

  it.live("spec: a health change is an entity.state whose description carries the GPU's health state", () =>
    Effect.gen(function* () {
      const turned = trayGpu("health")
      const failed: InventoryEvent = {
        ...turned,
        record: {
          ...turned.record,
          health: { state: "failed", reasons: ["row-remap-failure"], rmaEligible: true },
          previousHealthState: "ok",
        },
      }
      const [state] = entityRecords(yield* sent("spec", [failed]))
      assert.strictEqual(state?.eventName, "entity.state")
      const described = state?.attributes.get("entity.description")
      assert.deepStrictEqual(
        described !== undefined && "kvlist" in described ? described.kvlist.get("nvidia.gpu.health.state") : undefined,
        str("failed"),
      )
    }).pipe(Effect.scoped),
  )

  it.live("spec: a GPU on no tray and of an unknown node has no relationships; http/json carries the same maps", () =>
    Effect.gen(function* () {
      const lone: InventoryEvent = { ...addedEvent(4), origin: {} }
      const records = entityRecords(yield* sent("spec", [lone], "http/json"))
      assert.strictEqual(records.length, 1)
      assert.isFalse((records[0]?.attributes ?? new Map()).has("entity.relationships"))
      assert.isFalse((records[0]?.attributes ?? new Map()).has("entity.report.interval"))
      assert.deepStrictEqual(records[0]?.attributes.get("entity.id"), map({ "hw.id": str(lone.record.uuid) }))
    }).pipe(Effect.scoped),
  )

  it("takes its form from OTLP_ENTITY_EVENTS' values and refuses others", () => {
    for (const form of ["off", "legacy", "spec"] as const) {
      const validated = OtlpExporter.factory.validate({ entityEvents: form })
      assert.isTrue(validated._tag === "Success" && validated.success.entityEvents === form)
    }
    const refused = OtlpExporter.factory.validate({ entityEvents: "both" })
    assert.isTrue(refused._tag === "Failure" && refused.failure.some((problem) => problem.key === "entityEvents"))
  })
})
