import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { eventually, failures, type Harness, reads, startHarness } from "./ReceiverHarness.ts"

const failedLine = "node reading failed; the pod is read again at its next update or resync"

const linesOf = (harness: Harness, msg: string) => harness.logEvents().filter((event) => event.msg === msg)

const failingNodes = (harness: Harness): Record<string, number> => Object.fromEntries(harness.metrics.failingNodes())

describe("kube_exec receiver: failures an operator can see", () => {
  it.live("a container the pods do not have: one WARN per node, an ERROR naming CONTAINER, readings not ready", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ config: { container: "nvidia-device-plugin-ctr" } })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("every node failed", () => failures(harness).length >= nodes.length)
      yield* eventually("the ERROR line", () => harness.logEvents().some((event) => event.level === "error"))

      const warnings = linesOf(harness, failedLine)
      assert.strictEqual(warnings.length, nodes.length)
      assert.deepStrictEqual(new Set(warnings.map((line) => line.node)), new Set(nodes))
      for (const line of warnings) {
        assert.strictEqual(line.level, "warn")
        assert.strictEqual(line.kind, "exec-container-not-found")
        assert.strictEqual(line.pod, `${harness.cluster.namespace}/${harness.cluster.podOf(String(line.node))}`)
        assert.include(String(line.reason), "container nvidia-device-plugin-ctr is not valid for pod")
      }
      const errors = harness.logEvents().filter((event) => event.level === "error")
      assert.strictEqual(errors.length, 1)
      assert.strictEqual(errors[0]?.setting, "CONTAINER")
      assert.include(String(errors[0]?.msg), "CONTAINER")

      const readings = yield* harness.receiver.readings
      assert.isFalse(readings.healthy)
      assert.include(readings.message, "exec-container-not-found")
      assert.include(readings.message, "check CONTAINER")
      assert.deepStrictEqual(failingNodes(harness), { "exec-container-not-found": nodes.length })
      assert.deepStrictEqual(yield* harness.receiver.health, { healthy: true })
    }),
  )

  it.live("RBAC that forbids exec: readings name RBAC, then pass again once exec is allowed, each node recovered", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        config: { resyncMs: 200 },
        before: (cluster) => cluster.access.deny({ resource: "pods", subresource: "exec" }),
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("every node failed", () => failures(harness).length >= nodes.length)
      const forbidden = linesOf(harness, failedLine)
      assert.isTrue(forbidden.every((line) => line.kind === "exec-forbidden"))
      assert.include(String(forbidden[0]?.reason), "is forbidden")
      yield* eventually("readings not ready", () => Effect.runSync(harness.receiver.readings).healthy === false)
      const readings = yield* harness.receiver.readings
      assert.include(readings.message, "check RBAC")
      assert.strictEqual(harness.logEvents().filter((event) => event.level === "error")[0]?.setting, "RBAC")

      harness.cluster.access.allowAll()
      yield* eventually(
        "every node read",
        () => new Set(reads(harness).map((read) => read.node.name)).size === nodes.length,
      )
      yield* eventually("readings ready", () => Effect.runSync(harness.receiver.readings).healthy)
      const recovered = linesOf(harness, "node reading recovered")
      assert.deepStrictEqual(new Set(recovered.map((line) => line.node)), new Set(nodes))
      assert.isTrue(recovered.every((line) => line.level === "info" && line.kind === "exec-forbidden"))
      assert.deepStrictEqual(failingNodes(harness), {})
    }),
  )

  it.live("a NAMESPACE without device-plugin pods: a WARN naming namespace and selector, readings not ready", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ config: { namespace: "nvidia-device-plugin" } })
      yield* harness.receiver.ready
      yield* eventually("the WARN", () => harness.logEvents().some((event) => event.level === "warn"))
      const warnings = harness.logEvents().filter((event) => event.level === "warn")
      assert.strictEqual(warnings.length, 1)
      assert.strictEqual(warnings[0]?.namespace, "nvidia-device-plugin")
      assert.strictEqual(warnings[0]?.labelSelector, harness.cluster.labelSelector)
      assert.include(String(warnings[0]?.msg), '"nvidia-device-plugin"')
      assert.include(String(warnings[0]?.msg), harness.cluster.labelSelector)
      const readings = yield* harness.receiver.readings
      assert.isFalse(readings.healthy)
      assert.include(readings.message, "check NAMESPACE and LABEL_SELECTOR")
      assert.strictEqual(harness.execs.length, 0)
    }),
  )

  it.live("a selector that matches nothing warns once; the count dropping to zero warns again", () =>
    Effect.gen(function* () {
      const wrong = yield* startHarness({ config: { labelSelector: "app=nvidia-device-plugin" } })
      yield* wrong.receiver.ready
      yield* eventually("the WARN", () => wrong.logEvents().some((event) => event.labelSelector !== undefined))
      assert.strictEqual(wrong.logEvents()[0]?.labelSelector, "app=nvidia-device-plugin")
      assert.isFalse((yield* wrong.receiver.readings).healthy)

      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      assert.isTrue((yield* harness.receiver.readings).healthy)
      assert.isFalse(harness.logEvents().some((event) => event.labelSelector !== undefined))
      for (const node of nodes) harness.cluster.removeNode(node)
      yield* eventually("the WARN after the last pod left", () =>
        harness.logEvents().some((event) => event.labelSelector !== undefined),
      )
      assert.isFalse((yield* harness.receiver.readings).healthy)
      harness.cluster.addNode("t4")
      yield* eventually("a reading of the new node", () => reads(harness).length > nodes.length)
      assert.isTrue((yield* harness.receiver.readings).healthy)
    }),
  )

  it.live("a broken driver: one WARN with the excerpt however often it is read, a gauge entry, then recovered", () =>
    Effect.gen(function* () {
      let broken = ""
      const harness = yield* startHarness({
        config: { resyncMs: 100 },
        before: (cluster) => {
          broken = cluster.nodeNames()[0] as string
          cluster.setDriverFailure(broken, "driver-not-loaded")
        },
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("several failed readings", () => failures(harness).length >= 5)
      const warnings = linesOf(harness, failedLine)
      assert.strictEqual(warnings.length, 1)
      assert.strictEqual(warnings[0]?.node, broken)
      assert.strictEqual(warnings[0]?.kind, "driver-not-loaded")
      assert.include(String(warnings[0]?.excerpt), "NVIDIA-SMI has failed")
      assert.isAtMost(String(warnings[0]?.excerpt).length, 120)
      assert.deepStrictEqual(failingNodes(harness), { "driver-not-loaded": 1 })
      yield* eventually(
        "the other nodes read",
        () => new Set(reads(harness).map((read) => read.node.name)).size === nodes.length - 1,
      )
      assert.isTrue((yield* harness.receiver.readings).healthy)
      assert.isFalse(harness.logEvents().some((event) => event.level === "error"))

      harness.cluster.setDriverFailure(broken, undefined)
      yield* eventually("the recovery", () => linesOf(harness, "node reading recovered").length === 1)
      const recovered = linesOf(harness, "node reading recovered")[0]
      assert.strictEqual(recovered?.node, broken)
      assert.strictEqual(recovered?.kind, "driver-not-loaded")
      assert.deepStrictEqual(failingNodes(harness), {})
    }),
  )

  it.live("repeats of a failure past the log interval give one more line carrying the count held back", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        config: { resyncMs: 100 },
        tuning: { failingNodes: { repeatLogIntervalMs: 1_000, maxNodes: 100 } },
        before: (cluster) => cluster.setDriverFailure(cluster.nodeNames()[0] as string, "no-devices"),
      })
      yield* eventually("a second WARN", () => linesOf(harness, failedLine).length >= 2)
      const [first, second] = linesOf(harness, failedLine)
      assert.isUndefined(first?.suppressed)
      assert.isAbove(Number(second?.suppressed), 0)
      assert.strictEqual(second?.kind, "no-devices")
    }),
  )

  it.live("every node broken: no reading ever succeeded, an ERROR with the kinds, readings not ready", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        before: (cluster) => {
          for (const node of cluster.nodeNames()) cluster.setDriverFailure(node, "driver-not-loaded")
        },
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("every node failed", () => failures(harness).length >= nodes.length)
      yield* eventually("the ERROR line", () => harness.logEvents().some((event) => event.level === "error"))
      const readings = yield* harness.receiver.readings
      assert.isFalse(readings.healthy)
      assert.include(
        readings.message,
        `no reading has succeeded yet (failing nodes by kind: driver-not-loaded ${nodes.length})`,
      )
    }),
  )
})
