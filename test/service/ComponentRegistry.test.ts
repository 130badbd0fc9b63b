import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ComponentConfigError } from "../../src/component/ComponentConfigError.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { ComponentRegistry, type ExporterEntry } from "../../src/service/ComponentRegistry.ts"
import * as ExporterModule from "../../src/service/ExporterModule.ts"
import { addedEvents } from "../exporter/InventoryEvents.ts"

const here = dirname(fileURLToPath(import.meta.url))
const registry = ComponentRegistry.make(builtinComponents)
const service = { clusterName: "prod-eu", serviceVersion: "0.1.0" }

const problemsOf = (sections: ReadonlyArray<ExporterEntry>, baseDir = here) =>
  registry.resolveExporters(sections, { baseDir }).pipe(
    Effect.flip,
    Effect.map((error: ComponentConfigError) => error.problems),
  )

describe("ComponentRegistry", () => {
  it.effect("knows the built-in types by kind", () =>
    Effect.gen(function* () {
      const exporterTypes = ["http", "nats", "otlp", "postgres", "stdout"]
      const resolved = yield* registry.resolveExporters(
        exporterTypes.map((type) => ({ id: type, type, config: {} })),
        { baseDir: here },
      )
      assert.deepStrictEqual(
        resolved.map((exporter) => exporter.type),
        exporterTypes,
      )
      assert.strictEqual(registry.receiver("kube_exec")?.type, "kube_exec")
      assert.strictEqual(registry.processor("inventory")?.type, "inventory")
      assert.isUndefined(registry.receiver("inventory"))
      assert.isUndefined(registry.processor("kube_exec"))
    }),
  )

  it("refuses a type registered twice", () => {
    const stdout = builtinComponents.exporters?.[0]
    assert.isDefined(stdout)
    if (stdout !== undefined) {
      assert.throws(() => ComponentRegistry.make({ exporters: [stdout, stdout] }), /registered twice/)
    }
  })

  it.effect("resolves built-in sections with their defaults", () =>
    Effect.gen(function* () {
      const resolved = yield* registry.resolveExporters(
        [
          { id: "stdout", type: "stdout", section: null },
          { id: "stdout/audit", type: "stdout", section: { queueSize: 50, batchSize: 5 } },
        ],
        { baseDir: here },
      )
      assert.deepStrictEqual(
        resolved.map((entry) => [entry.id, entry.type]),
        [
          ["stdout", "stdout"],
          ["stdout/audit", "stdout"],
        ],
      )
    }),
  )

  it.effect("reports the problems of every section at once, under exporters.<id>.", () =>
    Effect.gen(function* () {
      const problems = yield* problemsOf([
        { id: "stdout", type: "stdout", section: { queueSize: -1 } },
        { id: "stdout/debug", type: "stdout", section: { colour: true, writeTimeout: "fast" } },
        { id: "kafka", type: "kafka", section: {} },
        { id: "memory", type: "memory", module: "./third-party/missing-exporter.ts", section: {} },
        { id: "broken", type: "broken", module: "./third-party/wrong-shape-exporter.ts", section: {} },
        { id: "memory/bad", type: "memory", module: "./third-party/memory-exporter.ts", section: { label: 3 } },
      ])

      assert.deepStrictEqual(
        problems.map((problem) => problem.key),
        [
          "exporters.stdout.queueSize",
          "exporters.stdout/debug.colour",
          "exporters.stdout/debug.writeTimeout",
          "exporters.kafka",
          "exporters.memory.module",
          "exporters.broken.module",
          "exporters.memory/bad.label",
        ],
      )
      const message = (key: string) => problems.find((problem) => problem.key === key)?.message ?? ""
      assert.include(message("exporters.kafka"), 'unknown exporter type "kafka"')
      assert.include(message("exporters.kafka"), "stdout")
      assert.include(message("exporters.memory.module"), "cannot be loaded")
      assert.include(message("exporters.broken.module"), 'kind must be "exporter"')
      assert.include(message("exporters.broken.module"), "type must be a non-empty string")
      assert.include(message("exporters.broken.module"), "create must be a function")
      assert.strictEqual(message("exporters.memory/bad.label"), "must be a string")
    }),
  )

  it.effect("reports an id given twice", () =>
    Effect.gen(function* () {
      const problems = yield* problemsOf([
        { id: "stdout", type: "stdout", section: {} },
        { id: "stdout", type: "stdout", section: {} },
      ])
      assert.deepStrictEqual(problems, [{ key: "exporters.stdout", message: "is defined more than once" }])
    }),
  )

  describe("third-party exporter modules", () => {
    it.effect("loads a factory from a path relative to the config file and runs it", () =>
      Effect.gen(function* () {
        const [memory] = yield* registry.resolveExporters(
          [
            {
              id: "memory/archive",
              type: "memory",
              module: "./third-party/memory-exporter.ts",
              section: { label: "a" },
            },
          ],
          { baseDir: here },
        )
        assert.isDefined(memory)
        if (memory === undefined) return
        assert.deepStrictEqual(memory.config, { label: "a" })
        const exporter = yield* memory.create(service)
        yield* exporter.export(addedEvents(3))
        assert.strictEqual(exporter.id, "memory/archive")
        assert.strictEqual((yield* exporter.stats).sent, 3)
      }),
    )

    it.effect("loads a default export from an absolute path and from a file URL", () =>
      Effect.gen(function* () {
        const path = join(here, "third-party", "audit-exporter.ts")
        const resolved = yield* registry.resolveExporters(
          [
            { id: "audit", type: "audit", module: path, section: {} },
            { id: "audit/copy", type: "audit", module: pathToFileURL(path).href, section: {} },
          ],
          { baseDir: "/nowhere" },
        )
        assert.deepStrictEqual(
          resolved.map((entry) => entry.config),
          [{ label: "memory" }, { label: "memory" }],
        )
      }),
    )

    it.effect("ignores the module key inside the section it validates", () =>
      Effect.gen(function* () {
        const module = "./third-party/memory-exporter.ts"
        const [memory] = yield* registry.resolveExporters(
          [{ id: "memory", type: "memory", module, section: { module, label: "b" } }],
          { baseDir: here },
        )
        assert.deepStrictEqual(memory?.config, { label: "b" })
      }),
    )

    it.effect("rejects a module whose factory is of another type than its section", () =>
      Effect.gen(function* () {
        const problems = yield* problemsOf([
          { id: "kafka", type: "kafka", module: "./third-party/memory-exporter.ts", section: {} },
        ])
        assert.deepStrictEqual(problems, [
          {
            key: "exporters.kafka.module",
            message: 'module "./third-party/memory-exporter.ts" provides exporter type "memory", not "kafka"',
          },
        ])
      }),
    )

    it.effect("reports a package that is not installed or exports no factory", () =>
      Effect.gen(function* () {
        const problems = yield* problemsOf([
          { id: "kafka", type: "kafka", module: "@acme/gpu-serials-kafka", section: {} },
          { id: "effect", type: "effect", module: "effect", section: {} },
        ])
        assert.deepStrictEqual(
          problems.map((problem) => problem.key),
          ["exporters.kafka.module", "exporters.effect.module"],
        )
        assert.include(problems[0]?.message ?? "", 'module "@acme/gpu-serials-kafka" cannot be loaded')
        assert.include(problems[1]?.message ?? "", "exports no exporter factory")
      }),
    )

    it.effect("fails to start an exporter whose factory returns something else", () =>
      Effect.gen(function* () {
        const [hollow] = yield* registry.resolveExporters(
          [{ id: "hollow", type: "hollow", module: "./third-party/hollow-exporter.ts", section: {} }],
          { baseDir: here },
        )
        assert.isDefined(hollow)
        if (hollow === undefined) return
        const error = yield* Effect.flip(hollow.create(service))
        assert.strictEqual(error._tag, "ComponentStartError")
        assert.strictEqual(error.component, "hollow")
        assert.include(error.message, "flush must be a function")
      }),
    )

    it("turns module values into import specifiers", () => {
      assert.strictEqual(
        ExporterModule.importSpecifier("./plugins/kafka.js", "/etc/gpu-serials"),
        "file:///etc/gpu-serials/plugins/kafka.js",
      )
      assert.strictEqual(ExporterModule.importSpecifier("../kafka.js", "/etc/gpu-serials"), "file:///etc/kafka.js")
      assert.strictEqual(ExporterModule.importSpecifier("/opt/kafka.js", "/etc"), "file:///opt/kafka.js")
      assert.strictEqual(ExporterModule.importSpecifier("@acme/gpu-serials-kafka", "/etc"), "@acme/gpu-serials-kafka")
    })
  })
})
