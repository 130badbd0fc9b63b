import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import * as NatsKvInventoryStore from "../../src/exporter/nats/NatsKvInventoryStore.ts"
import * as OtlpExporter from "../../src/exporter/otlp/OtlpExporter.ts"
import * as PostgresExporter from "../../src/exporter/postgres/PostgresExporter.ts"
import * as PostgresInventoryStore from "../../src/exporter/postgres/PostgresInventoryStore.ts"
import { stdoutSettings } from "../../src/exporter/stdout/StdoutConfig.ts"
import * as StdoutExporter from "../../src/exporter/stdout/StdoutExporter.ts"
import type { ExporterFactory } from "../../src/pipeline/Exporter.ts"
import { exporterKeptStore, type PipelineKeepers } from "../../src/pipeline/InventoryStore.ts"
import * as KubeExecFactory from "../../src/receiver/kube/KubeExecFactory.ts"
import * as NodeLabelsInventoryStore from "../../src/receiver/kube/nodelabels/NodeLabelsInventoryStore.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { onDemand, onDemandStore } from "../../src/service/OnDemandFactory.ts"

const createSettings = { id: "stdout/broken", clusterName: "prod", serviceVersion: "0.1.0" }

/** Creates a component in a scope of its own and closes it; answers how the creation ended. */
const createdIn = <A, E>(create: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const exit = yield* Effect.exit(create.pipe(Scope.provide(scope)))
      yield* Scope.close(scope, Exit.void)
      return exit
    }),
  )

describe("the distribution's on-demand factories", () => {
  it("declare the type and settings of the implementation they import", () => {
    const implementations = [
      { listed: builtinComponents.receivers, factory: KubeExecFactory.factory },
      { listed: builtinComponents.exporters, factory: OtlpExporter.factory },
      { listed: builtinComponents.exporters, factory: NatsExporter.factory },
      { listed: builtinComponents.exporters, factory: PostgresExporter.factory },
    ]
    for (const { listed, factory } of implementations) {
      const entry = listed.find((candidate) => candidate.type === factory.type)
      expect(entry?.kind, factory.type).toBe(factory.kind)
      expect(entry?.settings, factory.type).toBe(factory.settings)
    }
  })

  it("declare the stores of the implementation they import, keepers included", () => {
    const implementations = [
      NodeLabelsInventoryStore.storeFactory,
      NatsKvInventoryStore.storeFactory,
      PostgresInventoryStore.storeFactory,
    ]
    const receiver = (enabled: boolean) => ({
      id: "kube_exec",
      type: "kube_exec",
      config: { ...KubeExecFactory.factory.defaultConfig, nodeLabels: { enabled, prefix: "gpu-serials.io" } },
    })
    const pipelines: ReadonlyArray<PipelineKeepers> = [
      { receivers: [], exporters: [] },
      { receivers: [receiver(false)], exporters: [{ id: "stdout", type: "stdout" }] },
      {
        receivers: [receiver(true)],
        exporters: [
          { id: "nats", type: "nats" },
          { id: "postgres/archive", type: "postgres" },
        ],
      },
    ]
    const names = ["memory", "node-labels", "nats", "postgres", "postgres/archive", "stdout"]
    for (const store of implementations) {
      const entry = builtinComponents.stores.find((candidate) => candidate.type === store.type)
      expect(entry?.namedBy, store.type).toBe(store.namedBy)
      for (const pipeline of pipelines) {
        for (const name of names)
          expect(entry?.claim(name, pipeline), `${store.type}: ${name}`).toEqual(store.claim(name, pipeline))
      }
    }
  })

  it("create the component through the implementation's factory", async () => {
    const factory = onDemand({ kind: "exporter", type: "stdout", settings: stdoutSettings }, () =>
      Promise.resolve(StdoutExporter.factory),
    )
    const exit = await createdIn(factory.create(factory.defaultConfig, { ...createSettings, id: "stdout" }))
    expect(Exit.isSuccess(exit) && exit.value.id).toBe("stdout")
  })

  it("fail the start, naming the component, when the implementation cannot be loaded", async () => {
    const missing = (): Promise<ExporterFactory> => Promise.reject(new Error("Cannot find package 'pg'"))
    const factory = onDemand({ kind: "exporter", type: "stdout", settings: stdoutSettings }, missing)
    const exit = await createdIn(factory.create(factory.defaultConfig, createSettings))
    expect(exit).toEqual(
      Exit.fail(
        expect.objectContaining({
          _tag: "ComponentStartError",
          component: "stdout/broken",
          message: "cannot load its implementation: Cannot find package 'pg'",
        }),
      ),
    )
    const store = onDemandStore(exporterKeptStore("nats"), () => Promise.reject(new Error("gone")))
    const storeExit = await createdIn(store.create({}, { clusterName: "prod", id: "nats" }))
    expect(Exit.isFailure(storeExit)).toBe(true)
  })
})
