import { assert, describe, it } from "@effect/vitest"
import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Layer, Queue, Result } from "effect"
import { InventoryFeed } from "../../../src/pipeline/InventoryFeed.ts"
import { factory } from "../../../src/receiver/kube/KubeExecFactory.ts"
import { ComponentRegistry } from "../../../src/service/ComponentRegistry.ts"
import * as InventoryFeedQueue from "../../../src/service/InventoryFeedQueue.ts"
import { recordingMetrics } from "../../support/RecordingMetrics.ts"
import { quickCluster } from "./ReceiverHarness.ts"

const settings = { id: "kube_exec", clusterName: "test", serviceVersion: "0.0.0" }

const feedLayer = Layer.effect(InventoryFeed, InventoryFeedQueue.make)

describe("kube_exec factory", () => {
  it("is a receiver of type kube_exec that a registry accepts", () => {
    assert.strictEqual(factory.kind, "receiver")
    assert.strictEqual(factory.type, "kube_exec")
    const registry = ComponentRegistry.make({ receivers: [factory] })
    assert.strictEqual(registry.receiver("kube_exec"), factory)
  })

  it("defaults to the settings table's defaults", () => {
    assert.strictEqual(factory.defaultConfig.namespace, "gpu-operator")
    assert.strictEqual(factory.defaultConfig.labelSelector, "app=nvidia-device-plugin-daemonset")
    assert.strictEqual(factory.defaultConfig.workers, 16)
    assert.strictEqual(factory.defaultConfig.timeoutMs, 30_000)
    assert.strictEqual(factory.defaultConfig.qps, 50)
    assert.strictEqual(factory.defaultConfig.burst, 100)
    assert.deepStrictEqual(factory.validate(undefined), Result.succeed(factory.defaultConfig))
  })

  it("validates its section with its settings' rules, every problem at once", () => {
    const outcome = factory.validate({
      workers: 0,
      labelSelector: "app in (",
      nvidiaSmi: { mode: "html", maxOutput: "8Mi" },
      extra: true,
    })
    assert.isTrue(Result.isFailure(outcome))
    const keys = Result.isFailure(outcome) ? outcome.failure.map((problem) => problem.key).sort() : []
    assert.deepStrictEqual(keys, ["extra", "labelSelector", "nvidiaSmi.mode", "workers"])
    const workers = Result.isFailure(outcome) ? outcome.failure.find((problem) => problem.key === "workers") : undefined
    assert.strictEqual(workers?.message, "workers must be > 0")
  })

  it("validates its section against the settings' ranges", () => {
    const outcome = factory.validate({ workers: 1_000_000, timeout: "596h31m23.648s" })
    const problems = Result.isFailure(outcome) ? outcome.failure : []
    assert.deepStrictEqual(
      problems.map((problem) => [problem.key, problem.message]),
      [
        ["workers", "workers must be between 1 and 1024, got 1000000"],
        ["timeout", "timeout must be between 1ms and 1h, got 596h31m23.648s"],
      ],
    )
  })

  it.effect("fails to start with a clear error when the kubeconfig does not exist", () =>
    Effect.gen(function* () {
      const { layer } = recordingMetrics()
      const error = yield* factory
        .create({ ...factory.defaultConfig, kubeconfig: "/nonexistent/kubeconfig" }, settings)
        .pipe(Effect.provide(layer), Effect.provide(feedLayer), Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "ComponentStartError")
      assert.strictEqual(error.component, "kube_exec")
      assert.include(error.message, "/nonexistent/kubeconfig")
    }),
  )

  it.live("creates a running receiver from the kubeconfig path", () =>
    Effect.gen(function* () {
      const cluster = yield* Effect.acquireRelease(
        Effect.promise(() => startSimulatedCluster({ ...quickCluster, nodes: 2 })),
        (started) => Effect.promise(() => started.close()),
      )
      const { layer } = recordingMetrics()
      const receiver = yield* factory
        .create(
          {
            ...factory.defaultConfig,
            kubeconfig: cluster.kubeconfigPath,
            namespace: cluster.namespace,
            labelSelector: cluster.labelSelector,
            container: cluster.container,
          },
          settings,
        )
        .pipe(Effect.provide(layer), Effect.provide(feedLayer))
      yield* receiver.ready
      const first = yield* Queue.take(receiver.observations)
      const second = yield* Queue.take(receiver.observations)
      const third = yield* Queue.take(receiver.observations)
      assert.deepStrictEqual([first._tag, second._tag, third._tag], ["ClusterListed", "NodeRead", "NodeRead"])
    }),
  )
})
