import { assert, describe, it } from "@effect/vitest"
import type { SimulatedClusterOptions } from "@gpu-serials/kube-sim"
import { Effect } from "effect"
import { ShutdownDeadline } from "../../../../src/component/ShutdownDeadline.ts"
import { upsert } from "../../../../src/domain/InventoryChange.ts"
import type { InventoryEvent } from "../../../../src/domain/InventoryEvent.ts"
import type { KubeApi } from "../../../../src/kubeclient/rest/KubeApi.ts"
import { InventoryProcessor } from "../../../../src/processor/inventory/InventoryProcessor.ts"
import * as MemoryInventoryStore from "../../../../src/processor/inventory/MemoryInventoryStore.ts"
import type { KubeExecConfig } from "../../../../src/receiver/kube/KubeExecConfig.ts"
import * as InventoryFeedQueue from "../../../../src/service/InventoryFeedQueue.ts"
import { recordingMetrics } from "../../../support/RecordingMetrics.ts"
import { eventually, type Harness, reads, startHarness } from "../ReceiverHarness.ts"

const prefix = "gpu-serials.dev"

type Labels = Readonly<Record<string, string>>

/** Every node's labels, as the API server holds them now. */
const clusterLabels = (api: KubeApi["Service"]) =>
  api.listNodes({ limit: 500 }).pipe(
    Effect.orDie,
    Effect.map((page) => {
      const labels = new Map<string, Labels>()
      for (const item of page.items) {
        const { metadata } = item as { metadata: { name: string; labels?: Labels } }
        labels.set(metadata.name, metadata.labels ?? {})
      }
      return labels
    }),
  )

const underPrefix = (labels: Labels | undefined): Labels =>
  Object.fromEntries(Object.entries(labels ?? {}).filter(([key]) => key.startsWith(`${prefix}/`)))

const outsidePrefix = (labels: Labels | undefined): Labels =>
  Object.fromEntries(Object.entries(labels ?? {}).filter(([key]) => !key.startsWith(`${prefix}/`)))

/** The labels a node's simulated GPUs should give it. */
const expectedLabels = (harness: Harness, node: string): Labels => {
  const gpus = harness.cluster.node(node)?.gpus ?? []
  const labels: Record<string, string> = { [`${prefix}/gpu-count`]: String(gpus.length) }
  for (const gpu of gpus) {
    labels[`${prefix}/gpu-${gpu.index}`] = gpu.serial
    labels[`${prefix}/gpu-${gpu.index}-uuid`] = gpu.uuid
  }
  const chassis = gpus.find((gpu) => gpu.chassisSerial !== undefined)?.chassisSerial
  if (chassis !== undefined) labels[`${prefix}/chassis`] = chassis
  return labels
}

/** Polls the API server until `condition` holds on every node's labels. */
const eventuallyLabels = (
  harness: Harness,
  what: string,
  condition: (labels: ReadonlyMap<string, Labels>) => boolean,
  timeout = "15 seconds",
) =>
  Effect.gen(function* () {
    let latest: ReadonlyMap<string, Labels> = new Map()
    const deadline = Date.now() + 15_000
    while (!condition(latest)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what} (${timeout})`))
      yield* Effect.sleep("50 millis")
      latest = yield* clusterLabels(harness.api)
    }
    return latest
  })

const everyNodeLabelled = (harness: Harness) => (labels: ReadonlyMap<string, Labels>) =>
  harness.cluster.nodeNames().every((node) => sameLabels(underPrefix(labels.get(node)), expectedLabels(harness, node)))

const sortedKeys = (labels: Labels): Labels =>
  Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)))

const sameLabels = (a: Labels | undefined, b: Labels | undefined) =>
  JSON.stringify(sortedKeys(a ?? {})) === JSON.stringify(sortedKeys(b ?? {}))

interface LabellingOptions {
  readonly cluster?: SimulatedClusterOptions
  readonly config?: Partial<KubeExecConfig>
  readonly removalGraceMs?: number
  /** The budget of the labeller's last pass at close; 5 seconds unless given. */
  readonly shutdownTimeoutMs?: number
  /** Nodes patched at the same time; 2 unless given. */
  readonly labellerWorkers?: number
  /** The receiver's QPS and burst; the harness's unless given. */
  readonly qps?: number
  readonly burst?: number
  readonly before?: Parameters<typeof startHarness>[0] extends infer O
    ? O extends { before?: infer B }
      ? B
      : never
    : never
}

/** The receiver against the simulated cluster, with an inventory processor taking its observations. */
const startLabelling = (options: LabellingOptions = {}) =>
  Effect.gen(function* () {
    const feed = yield* InventoryFeedQueue.make
    const memory = yield* MemoryInventoryStore.make()
    const events: Array<InventoryEvent> = []
    const processor = yield* InventoryProcessor.make({
      settings: { cluster: "test", reportIntervalMs: 3_600_000, removalGraceMs: options.removalGraceMs ?? 60_000 },
      sink: (batch) => Effect.sync(() => void events.push(...batch)),
      store: memory.store,
      feed,
      tickInterval: "100 millis",
    }).pipe(Effect.provide(recordingMetrics().layer))
    const harness = yield* startHarness({
      feed,
      onObservation: processor.observe,
      ...(options.cluster === undefined ? {} : { cluster: options.cluster }),
      config: { resyncMs: 0, nodeLabels: { enabled: true, prefix }, ...options.config },
      tuning: {
        nodeLabeller: {
          workers: options.labellerWorkers ?? 2,
          retryBackoff: { baseMs: 50, maxMs: 400, jitter: 0.5 },
          shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
        },
      },
      ...(options.before === undefined ? {} : { before: options.before }),
      ...(options.qps === undefined ? {} : { qps: options.qps }),
      ...(options.burst === undefined ? {} : { burst: options.burst }),
    })
    return { harness, events, processor }
  })

const patches = (harness: Harness, result: string) =>
  harness.metrics.nodeLabelPatches.filter((each) => each === result).length

/** Waits until every GPU is added and both labelling workers wait on a patch that hangs. */
const untilPatchesHang = (harness: Harness, events: ReadonlyArray<InventoryEvent>) =>
  Effect.gen(function* () {
    const gpus = harness.cluster
      .nodeNames()
      .reduce((count, node) => count + (harness.cluster.node(node)?.gpus.length ?? 0), 0)
    yield* eventually("every GPU added", () => events.filter((event) => event.record.event === "added").length >= gpus)
    yield* eventually(
      "both workers waiting on a patch",
      () => new Set(harness.labelPatches.map((patch) => patch.node)).size >= 2,
    )
  })

/** Stops the receiver, failing the test when that takes more than 10 seconds. */
const stopWithin10s = (harness: Harness) =>
  harness.stop.pipe(
    Effect.timeoutOrElse({
      duration: "10 seconds",
      orElse: () => Effect.die(new Error("the receiver did not stop within 10 seconds")),
    }),
  )

describe("node labels against the simulated cluster", () => {
  it.live("labels every node with its GPUs' serials and UUIDs, its chassis and count, and nothing else", () =>
    Effect.gen(function* () {
      const { harness } = yield* startLabelling({ config: { resyncMs: 200 } })
      const before = yield* clusterLabels(harness.api)
      const labelled = yield* eventuallyLabels(harness, "every node labelled", everyNodeLabelled(harness))
      for (const node of harness.cluster.nodeNames()) {
        assert.deepStrictEqual(outsidePrefix(labelled.get(node)), outsidePrefix(before.get(node)))
      }
      const chassisNodes = harness.cluster
        .nodeNames()
        .filter((node) => labelled.get(node)?.[`${prefix}/chassis`] !== undefined)
      assert.isAbove(chassisNodes.length, 0)
      assert.strictEqual(patches(harness, "ok"), harness.cluster.nodeNames().length)

      // Resyncs read every pod again; labels that already describe the nodes are not written again.
      const readsBefore = reads(harness).length
      yield* eventually(
        "two resyncs",
        () => reads(harness).length >= readsBefore + 2 * harness.cluster.nodeNames().length,
      )
      yield* Effect.sleep("200 millis")
      assert.strictEqual(patches(harness, "ok"), harness.cluster.nodeNames().length)
      assert.strictEqual(patches(harness, "failed"), 0)
    }),
  )

  it.live("a fleet's first sync at the QPS bound reads every node before most label patches go out", () =>
    Effect.gen(function* () {
      const nodes = 64
      // 8 reading workers at 100 ms an exec could make 80 execs a second: QPS 20 is the bound, and readings
      // always wait for a token; the labeller's 4 workers (the default) would take a third of them in turn.
      const { harness } = yield* startLabelling({
        cluster: { nodes, execLatency: 100 },
        config: { workers: 8 },
        labellerWorkers: 4,
        qps: 20,
        burst: 1,
      })
      yield* eventually("every node labelled", () => patches(harness, "ok") >= nodes, "60 seconds")
      const podsRead = new Set<string>()
      let patchesBeforeFleetRead = 0
      for (const { call, name } of harness.callsThrough) {
        if (podsRead.size === nodes) break
        if (call === "exec") podsRead.add(name)
        else patchesBeforeFleetRead += 1
      }
      assert.strictEqual(podsRead.size, nodes)
      // Patches go while readings wait only once they have yielded for 2 s (or in a moment no reading waits).
      assert.isAtMost(patchesBeforeFleetRead, nodes / 4)
    }),
  )

  it.live("a swap of GPUs between two nodes relabels both nodes", () =>
    Effect.gen(function* () {
      const { harness } = yield* startLabelling({
        cluster: { nodes: 3, modelMix: { "h100-hgx": 1 } },
        config: { resyncMs: 200 },
      })
      yield* eventuallyLabels(harness, "every node labelled", everyNodeLabelled(harness))
      const [first, second] = harness.cluster.nodeNames() as [string, string]
      const written = patches(harness, "ok")
      const moved = harness.cluster.swapGpus(first, second, { index: 0, restartPods: false })
      assert.isAbove(moved.length, 0)
      const after = yield* eventuallyLabels(harness, "both nodes relabelled", everyNodeLabelled(harness))
      assert.strictEqual(after.get(first)?.[`${prefix}/gpu-0-uuid`], harness.cluster.node(first)?.gpus[0]?.uuid)
      assert.strictEqual(after.get(second)?.[`${prefix}/gpu-0-uuid`], harness.cluster.node(second)?.gpus[0]?.uuid)
      yield* Effect.sleep("500 millis")
      // One patch per node per change the inventory made: the first node read takes the new GPU at once,
      // the other first loses the GPU that moved away, then takes its new one.
      const swapPatches = patches(harness, "ok") - written
      assert.isAtLeast(swapPatches, 2)
      assert.isAtMost(swapPatches, 3)
    }),
  )

  it.live("removes a node's labels once the inventory removed its GPUs, and writes them again when it is read", () =>
    Effect.gen(function* () {
      // The replacement pod takes long to start: the node's GPUs are removed after the grace meanwhile.
      const { harness, events } = yield* startLabelling({
        cluster: { nodes: 2, podTimings: { startMs: 3_000, readyMs: 20, terminationMs: 20 } },
        removalGraceMs: 300,
      })
      yield* eventuallyLabels(harness, "every node labelled", everyNodeLabelled(harness))
      const [node, other] = harness.cluster.nodeNames() as [string, string]
      const before = yield* clusterLabels(harness.api)
      harness.cluster.restartPod(node)
      const cleared = yield* eventuallyLabels(
        harness,
        "the node's labels removed",
        (labels) => labels.size > 0 && Object.keys(underPrefix(labels.get(node))).length === 0,
      )
      assert.isTrue(events.some((event) => event.record.event === "removed" && event.record.node === node))
      assert.deepStrictEqual(outsidePrefix(cleared.get(node)), outsidePrefix(before.get(node)))
      assert.isTrue(sameLabels(cleared.get(other), before.get(other)))
      yield* eventuallyLabels(harness, "the node labelled again", everyNodeLabelled(harness))
    }),
  )

  it.live("puts back a label removed by hand and leaves labels of other prefixes alone", () =>
    Effect.gen(function* () {
      const { harness } = yield* startLabelling({ cluster: { nodes: 2 } })
      yield* eventuallyLabels(harness, "every node labelled", everyNodeLabelled(harness))
      const node = harness.cluster.nodeNames()[0] as string
      yield* harness.api
        .patchNodeLabels(node, { [`${prefix}/gpu-0`]: null, "example.com/team": "ml" })
        .pipe(Effect.orDie)
      const restored = yield* eventuallyLabels(
        harness,
        "the label put back",
        (labels) => labels.get(node)?.[`${prefix}/gpu-0`] !== undefined,
      )
      assert.strictEqual(restored.get(node)?.["example.com/team"], "ml")
      assert.isTrue(everyNodeLabelled(harness)(restored))
    }),
  )

  it.live("retries a patch the API server fails, counts it and logs it once per node", () =>
    Effect.gen(function* () {
      const { harness } = yield* startLabelling({
        cluster: { nodes: 2 },
        before: (cluster) =>
          cluster.faults.inject({
            kind: "server-error",
            status: 503,
            match: { verb: "patch", resource: "nodes" },
            times: 3,
          }),
      })
      yield* eventuallyLabels(harness, "every node labelled", everyNodeLabelled(harness))
      assert.strictEqual(patches(harness, "failed"), 3)
      assert.strictEqual(patches(harness, "ok"), 2)
      const warnings = harness
        .logEvents()
        .filter((line) => line.msg === "node labels not written, retrying with backoff")
      assert.isAtLeast(warnings.length, 1)
      assert.isAtMost(warnings.length, 2)
      assert.deepStrictEqual(new Set(warnings.map((line) => line.kind)), new Set(["server-error"]))
    }),
  )

  it.live("leaves out a value that cannot be a label, with one counted WARN, and writes the rest", () =>
    Effect.gen(function* () {
      const feed = yield* InventoryFeedQueue.make
      const harness = yield* startHarness({
        feed,
        cluster: { nodes: 1 },
        config: { resyncMs: 0, nodeLabels: { enabled: true, prefix } },
      })
      yield* harness.receiver.ready
      const node = harness.cluster.nodeNames()[0] as string
      const time = new Date()
      const gpu = {
        uuid: "GPU-11111111-2222-3333-4444-555555555555",
        node,
        machine: "na",
        pod: { namespace: "gpu-operator", name: "nvidia-device-plugin-daemonset-x" },
        gpu: { index: 0, uuid: "GPU-11111111-2222-3333-4444-555555555555", serial: "serial with spaces" },
        serialShared: false,
        firstSeen: time,
        lastSeen: time,
        lastReported: time,
      }
      yield* feed.publish([upsert(gpu)])
      const labelled = yield* eventuallyLabels(
        harness,
        "the UUID label",
        (labels) => labels.get(node)?.[`${prefix}/gpu-0-uuid`] === gpu.uuid,
      )
      assert.isUndefined(labelled.get(node)?.[`${prefix}/gpu-0`])
      assert.strictEqual(labelled.get(node)?.[`${prefix}/gpu-count`], "1")
      assert.deepStrictEqual(harness.metrics.nodeLabelValuesSkipped, ["serial"])
      const warnings = harness
        .logEvents()
        .filter((line) => line.msg?.toString().startsWith("node label values left out"))
      assert.strictEqual(warnings.length, 1)
      assert.isTrue(harness.labelPatches.every((patch) => !Object.values(patch.labels).includes("serial with spaces")))
    }),
  )

  it.live("a last pass the API server does not answer stops at its budget, with one line and abandoned patches", () =>
    Effect.gen(function* () {
      const { harness, events } = yield* startLabelling({
        cluster: { nodes: 3 },
        before: (cluster) =>
          cluster.faults.inject({ kind: "hang", match: { verb: "patch", resource: "nodes" }, times: 1_000 }),
        shutdownTimeoutMs: 300,
      })
      yield* untilPatchesHang(harness, events)

      yield* stopWithin10s(harness)
      const lines = harness.logEvents().filter((line) => line.msg === "node labels not written at shutdown")
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]?.nodes, harness.cluster.nodeNames().length)
      assert.match(String(lines[0]?.reason), /shutdown budget \(300ms\) ran out/)
      assert.isAbove(patches(harness, "abandoned"), 0)
      const labels = yield* clusterLabels(harness.api)
      for (const node of harness.cluster.nodeNames()) assert.deepStrictEqual(underPrefix(labels.get(node)), {})
    }),
  )

  it.live("a term that ends while the service runs on makes no last pass: it writes nothing more and says so", () =>
    Effect.gen(function* () {
      const deadline = yield* ShutdownDeadline.make("20 seconds")
      const { harness, events } = yield* startLabelling({
        cluster: { nodes: 3 },
        before: (cluster) =>
          cluster.faults.inject({ kind: "hang", match: { verb: "patch", resource: "nodes" }, times: 1_000 }),
      }).pipe(Effect.provideService(ShutdownDeadline, deadline))
      yield* untilPatchesHang(harness, events)
      const patchesSent = harness.labelPatches.length
      harness.cluster.faults.clear()

      yield* stopWithin10s(harness)
      assert.strictEqual(harness.labelPatches.length, patchesSent)
      const lines = harness.logEvents().filter((line) => line.msg === "node labels not written: the term ended")
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(
        lines[0]?.reason,
        "the term ended without a shutdown (leadership lost): the next leader or start writes them",
      )
    }),
  )

  it.live("writes nothing when node labels are disabled", () =>
    Effect.gen(function* () {
      const { harness } = yield* startLabelling({
        cluster: { nodes: 2 },
        config: { nodeLabels: { enabled: false, prefix } },
      })
      yield* eventually("every node read", () => reads(harness).length >= 2)
      yield* Effect.sleep("500 millis")
      const labels = yield* clusterLabels(harness.api)
      for (const node of harness.cluster.nodeNames()) assert.deepStrictEqual(underPrefix(labels.get(node)), {})
      assert.deepStrictEqual(harness.metrics.nodeLabelPatches, [])
    }),
  )
})
