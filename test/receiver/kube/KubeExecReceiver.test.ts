import { assert, describe, it } from "@effect/vitest"
import { requestApi, type SimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect } from "effect"
import { eventually, execsRanNvidiaSmiDirectly, failures, gone, reads, startHarness } from "./ReceiverHarness.ts"

describe("kube_exec receiver against the simulated cluster", () => {
  it.live("reads every ready pod once, with its node's GPUs", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* harness.receiver.ready
      yield* eventually("a reading of every node", () => reads(harness).length >= nodes.length)
      yield* Effect.sleep("300 millis")
      const readings = reads(harness)
      assert.strictEqual(readings.length, nodes.length)
      assert.deepStrictEqual(new Set(readings.map((read) => read.node.name)), new Set(nodes))
      for (const read of readings) {
        const simulated = harness.cluster.node(read.node.name)
        assert.isDefined(simulated)
        assert.strictEqual(read.reading.gpus.length, simulated?.gpus.length)
        assert.strictEqual(read.pod.name, simulated?.pod)
        assert.isDefined(read.node.uid)
      }
      assert.isTrue(execsRanNvidiaSmiDirectly(harness))
      assert.deepStrictEqual(yield* harness.receiver.health, { healthy: true })
      assert.isTrue(yield* harness.receiver.isReady)
      assert.strictEqual(harness.metrics.readings.filter((reading) => reading.result === "ok").length, nodes.length)
      assert.strictEqual(gone(harness).length, 0)
    }),
  )
})

describe("kube_exec receiver: pods and nodes coming and going", () => {
  it.live("hands over its first list of the cluster, every node and those with a pod, before any reading", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      assert.strictEqual(harness.listings.length, 1)
      const [listing] = harness.listings
      assert.deepStrictEqual([...(listing?.nodes ?? [])].sort(), [...nodes])
      assert.deepStrictEqual([...(listing?.nodesWithPod ?? [])].sort(), [...nodes])
      assert.isTrue(reads(harness).every((read) => read.time >= (listing?.time ?? new Date())))
    }),
  )

  it.live("a restarted pod gives NodeGone, then a reading of the new pod", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      const node = nodes[0] as string
      const oldPod = harness.cluster.restartPod(node)
      yield* eventually("a reading of the replacement pod", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      const ofNode = harness.observations.filter((observation) => observation.node.name === node)
      assert.deepStrictEqual(
        ofNode.map((observation) => observation._tag),
        ["NodeRead", "NodeGone", "NodeRead"],
      )
      const goneEvent = ofNode[1]
      assert.strictEqual(goneEvent?._tag === "NodeGone" ? goneEvent.reason : undefined, "pod-deleted")
      assert.isDefined(goneEvent?.node.uid)
    }),
  )

  it.live("a deleted node gives NodeGone with reason node-deleted", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      const node = nodes[1] as string
      harness.cluster.removeNode(node)
      yield* eventually("node-deleted", () =>
        gone(harness).some((event) => event.node.name === node && event.reason === "node-deleted"),
      )
    }),
  )

  it.live("a pod that is not ready is not read until it becomes ready", () =>
    Effect.gen(function* () {
      let unready = ""
      const harness = yield* startHarness({
        before: (cluster) => {
          unready = cluster.nodeNames()[0] as string
          cluster.setPodReady(unready, false)
        },
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("the ready pods read", () => reads(harness).length >= nodes.length - 1)
      yield* Effect.sleep("200 millis")
      assert.isFalse(reads(harness).some((read) => read.node.name === unready))
      assert.isFalse(harness.execs.some((exec) => exec.pod === harness.cluster.podOf(unready)))
      harness.cluster.setPodReady(unready, true)
      yield* eventually("the pod read once ready", () => reads(harness).some((read) => read.node.name === unready))
    }),
  )

  it.live("a node added later is read once its pod is ready", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      const added = harness.cluster.addNode("t4")
      yield* eventually("a reading of the added node", () => reads(harness).some((read) => read.node.name === added))
      const readOfAdded = reads(harness).find((read) => read.node.name === added)
      assert.strictEqual(readOfAdded?.reading.gpus.length, harness.cluster.node(added)?.gpus.length)
      assert.strictEqual(readOfAdded?.node.providerId, harness.cluster.node(added)?.providerId || undefined)
    }),
  )
})

describe("kube_exec receiver: failures", () => {
  it.live("an exec that hangs times out, is retried with backoff and then succeeds", () =>
    Effect.gen(function* () {
      let hung = ""
      const harness = yield* startHarness({
        config: { timeoutMs: 600 },
        before: (cluster) => {
          hung = cluster.nodeNames()[0] as string
          cluster.faults.inject({ kind: "exec-hang", node: hung, times: 2 })
        },
      })
      yield* eventually("a reading of the node whose exec hung", () =>
        reads(harness).some((read) => read.node.name === hung),
      )
      const podOfHung = harness.cluster.podOf(hung)
      assert.strictEqual(harness.execs.filter((exec) => exec.pod === podOfHung).length, 3)
      assert.strictEqual(harness.metrics.execs.filter((exec) => exec.result === "timeout").length, 2)
      assert.strictEqual(harness.metrics.readings.filter((reading) => reading.errorKind === "exec-timeout").length, 2)
      assert.strictEqual(harness.metrics.workQueueRetries.count, 2)
      assert.strictEqual(failures(harness).length, 0)
      // The server learns of a timed-out session's close a moment after the client gave it up.
      yield* eventually("the timed-out sessions closed", () => harness.cluster.stats().execSessionsOpen === 0)
    }),
  )

  it.live("a node whose driver is not loaded is reported once and not retried", () =>
    Effect.gen(function* () {
      let broken = ""
      const harness = yield* startHarness({
        before: (cluster) => {
          broken = cluster.nodeNames()[2] as string
          cluster.setDriverFailure(broken, "driver-not-loaded")
        },
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("every node read or failed", () => harness.observations.length >= nodes.length)
      yield* Effect.sleep("500 millis")
      const failed = failures(harness)
      assert.strictEqual(failed.length, 1)
      assert.strictEqual(failed[0]?.node.name, broken)
      assert.strictEqual(failed[0]?.failure.kind, "driver-not-loaded")
      assert.notInclude(failed[0]?.failure.message ?? "", "NVIDIA-SMI has failed")
      const podOfBroken = harness.cluster.podOf(broken)
      assert.strictEqual(harness.execs.filter((exec) => exec.pod === podOfBroken).length, 1)
      assert.strictEqual(harness.metrics.workQueueRetries.count, 0)
      assert.deepStrictEqual(harness.metrics.workQueueGiveUps, [])
      assert.strictEqual(reads(harness).length, nodes.length - 1)
    }),
  )

  it.live("a pod that keeps failing for a transient reason is given up after the last attempt", () =>
    Effect.gen(function* () {
      let hung = ""
      const harness = yield* startHarness({
        config: { timeoutMs: 300 },
        tuning: { maxAttempts: 3 },
        before: (cluster) => {
          hung = cluster.nodeNames()[0] as string
          cluster.faults.inject({ kind: "exec-hang", node: hung, times: 1_000 })
        },
      })
      yield* eventually("the give-up", () => failures(harness).length === 1)
      yield* Effect.sleep("800 millis")
      const failed = failures(harness)
      assert.strictEqual(failed.length, 1)
      assert.strictEqual(failed[0]?.failure.kind, "exec-timeout")
      assert.strictEqual(harness.execs.filter((exec) => exec.pod === harness.cluster.podOf(hung)).length, 3)
      assert.deepStrictEqual(harness.metrics.workQueueGiveUps, ["exec-timeout"])
      assert.strictEqual(harness.metrics.workQueueRetries.count, 2)
      const giveUps = harness
        .logEvents()
        .filter((event) => event.msg === "node reading failed; the pod is read again at its next update or resync")
      assert.strictEqual(giveUps.length, 1)
      assert.strictEqual(giveUps[0]?.level, "warn")
      assert.strictEqual(giveUps[0]?.kind, "exec-timeout")
      assert.strictEqual(giveUps[0]?.attempts, 3)
    }),
  )

  it.live("truncated output is retried; garbage is reported", () =>
    Effect.gen(function* () {
      let truncated = ""
      let garbled = ""
      const harness = yield* startHarness({
        config: { nvidiaSmi: { mode: "xml", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" } },
        before: (cluster) => {
          truncated = cluster.nodeNames()[0] as string
          garbled = cluster.nodeNames()[1] as string
          cluster.faults.inject({ kind: "exec-truncate", node: truncated })
          cluster.faults.inject({ kind: "exec-garbage", node: garbled })
        },
      })
      yield* eventually("the truncated node read on retry", () =>
        reads(harness).some((read) => read.node.name === truncated),
      )
      yield* eventually("the garbled node reported", () => failures(harness).some((f) => f.node.name === garbled))
      assert.isTrue(harness.metrics.readings.some((reading) => reading.errorKind === "truncated"))
      assert.strictEqual(failures(harness).find((f) => f.node.name === garbled)?.failure.kind, "not-nvidia-smi")
    }),
  )

  it.live("output beyond the cap fails the reading and closes the session", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 1, modelMix: { "h100-hgx": 1 } },
        config: { nvidiaSmi: { mode: "xml", maxOutputBytes: 2_048, path: "nvidia-smi", mlLibrary: "" } },
      })
      yield* eventually("the failure", () => failures(harness).length === 1)
      assert.strictEqual(failures(harness)[0]?.failure.kind, "output-too-large")
      yield* eventually("the session closed", () => harness.cluster.stats().execSessionsOpen === 0)
    }),
  )
})

describe("kube_exec receiver: API failures", () => {
  it.live("429 and 5xx on the first lists are retried and no pod is lost", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        before: (cluster) => {
          cluster.faults.inject({
            kind: "throttle",
            retryAfterSeconds: 0,
            match: { verb: "list", resource: "pods" },
            times: 2,
          })
          cluster.faults.inject({ kind: "server-error", status: 503, match: { verb: "list", resource: "nodes" } })
        },
      })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("every node read", () => reads(harness).length >= nodes.length)
      assert.includeMembers(harness.metrics.informerRestarts, ["pods", "nodes"])
      assert.isAtLeast(harness.metrics.informerRestarts.filter((resource) => resource === "pods").length, 2)
      assert.deepStrictEqual(yield* harness.receiver.health, { healthy: true })
    }),
  )

  it.live("a dropped watch is restarted and the events after it are not lost", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      assert.isAbove(harness.cluster.faults.dropWatches("pods"), 0)
      const node = nodes[3] as string
      const oldPod = harness.cluster.restartPod(node)
      yield* eventually("the restart metric", () => harness.metrics.informerRestarts.includes("pods"))
      yield* eventually("the new pod read", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      assert.isTrue(gone(harness).some((event) => event.node.name === node && event.reason === "pod-deleted"))
    }),
  )

  it.live("a stalled watch is replaced", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      assert.isAbove(harness.cluster.faults.stallWatches("pods"), 0)
      const node = nodes[0] as string
      const oldPod = harness.cluster.restartPod(node)
      yield* eventually("the new pod read through a new watch", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      assert.isTrue(harness.metrics.informerRestarts.includes("pods"))
    }),
  )

  it.live("a watch that resumes from a compacted resourceVersion relists and sees the deletion it missed", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness()
      const nodes = harness.cluster.nodeNames()
      yield* eventually("first readings", () => reads(harness).length >= nodes.length)
      harness.cluster.faults.stallWatches("pods")
      const node = nodes[2] as string
      const oldPod = harness.cluster.restartPod(node)
      harness.cluster.compactHistory()
      yield* eventually("the new pod read after the relist", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      assert.isTrue(gone(harness).some((event) => event.node.name === node && event.reason === "pod-deleted"))
      assert.isTrue(harness.logEvents().some((event) => event.msg === "watch resourceVersion expired, relisting"))
    }),
  )
})

describe("kube_exec receiver: readiness and health", () => {
  it.live("is neither ready nor healthy while pods cannot be listed, and recovers", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        before: (cluster) =>
          cluster.faults.inject({
            kind: "server-error",
            status: 500,
            match: { verb: "list", resource: "pods" },
            times: 1_000,
          }),
      })
      yield* eventually("a few restarts", () => harness.metrics.informerRestarts.length >= 3)
      assert.isFalse(yield* harness.receiver.isReady)
      const failing = yield* harness.receiver.health
      assert.isFalse(failing.healthy)
      assert.include(failing.message ?? "", "pods")
      assert.include(failing.message ?? "", "500")
      assert.strictEqual(harness.observations.length, 0)
      harness.cluster.faults.clear()
      yield* harness.receiver.ready
      yield* eventually("every node read", () => reads(harness).length >= harness.cluster.nodeNames().length)
      assert.deepStrictEqual(yield* harness.receiver.health, { healthy: true })
    }),
  )

  it.live("RESYNC re-reads every ready pod periodically", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ config: { resyncMs: 150 } })
      const nodes = harness.cluster.nodeNames()
      yield* eventually("two readings of every node", () =>
        nodes.every((node) => reads(harness).filter((read) => read.node.name === node).length >= 2),
      )
      assert.strictEqual(gone(harness).length, 0)
    }),
  )
})

describe("kube_exec receiver: nvidia-smi strategy", () => {
  it.live("auto mode reads a node labelled with an old driver branch as XML from the first run", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 1, modelMix: { "a100-mig": 1 } },
        config: {
          resyncMs: 200,
          nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
        },
      })
      yield* eventually("two readings", () => reads(harness).length >= 2)
      const formats = harness.execs.map((exec) => (exec.argv.includes("-x") ? "xml" : "csv"))
      assert.deepStrictEqual(new Set(formats), new Set(["xml"]))
      assert.isTrue(reads(harness).every((read) => read.reading.format === "xml"))
    }),
  )

  it.live("auto mode falls back to XML on a driver without the platform fields and remembers it", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 1, modelMix: { "a100-mig": 1 } },
        config: {
          resyncMs: 200,
          nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
        },
        before: (cluster) => unlabelDriverBranch(cluster),
      })
      yield* eventually("three readings", () => reads(harness).length >= 3)
      const formats = harness.execs.map((exec) => (exec.argv.includes("-x") ? "xml" : "csv"))
      assert.strictEqual(formats[0], "csv")
      assert.isAtLeast(formats.length, 4)
      assert.deepStrictEqual(new Set(formats.slice(1)), new Set(["xml"]))
      assert.isTrue(reads(harness).every((read) => read.reading.format === "xml"))
      assert.isTrue(execsRanNvidiaSmiDirectly(harness))
    }),
  )

  it.live("auto mode keeps the CSV query on a driver that has every field", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ cluster: { nodes: 1, modelMix: { "gb200-nvl72": 1 } } })
      yield* eventually("a reading", () => reads(harness).length >= 1)
      assert.strictEqual(reads(harness)[0]?.reading.format, "csv")
      assert.strictEqual(harness.execs.length, 1)
      assert.strictEqual(
        reads(harness)[0]?.reading.gpus.length,
        harness.cluster.node(harness.cluster.nodeNames()[0] as string)?.gpus.length,
      )
    }),
  )
})

describe("kube_exec receiver: hand-off", () => {
  it.live("a slow consumer holds the workers back without losing an observation", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { nodes: 6 },
        tuning: { observationBuffer: 1 },
        consumeDelay: "60 millis",
      })
      yield* eventually("every node read", () => reads(harness).length >= 6)
      yield* Effect.sleep("200 millis")
      assert.strictEqual(reads(harness).length, 6)
      assert.strictEqual(new Set(reads(harness).map((read) => read.node.name)).size, 6)
      assert.strictEqual(harness.metrics.readings.length, 6)
      assert.strictEqual(harness.metrics.workQueueRetries.count, 0)
    }),
  )

  it.live("a reading of a pod deleted while it was read is not handed over after its NodeGone", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ cluster: { nodes: 2, execLatency: 400 } })
      yield* harness.receiver.ready
      yield* eventually("execs in flight", () => harness.execs.length >= 2)
      const node = harness.cluster.nodeNames()[0] as string
      const oldPod = harness.cluster.restartPod(node)
      yield* eventually("the new pod read", () =>
        reads(harness).some((read) => read.node.name === node && read.pod.name !== oldPod),
      )
      const ofNode = harness.observations.filter((observation) => observation.node.name === node)
      assert.deepStrictEqual(
        ofNode.map((observation) => observation._tag),
        ["NodeGone", "NodeRead"],
      )
      assert.isFalse(reads(harness).some((read) => read.pod.name === oldPod))
    }),
  )
})

describe("kube_exec receiver: shutdown", () => {
  it.live("closing abandons in-flight reads at once, neither handed over nor counted, then ends the observations", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ cluster: { execLatency: 60_000 } })
      yield* harness.receiver.ready
      yield* eventually("execs in flight", () => harness.cluster.stats().execSessionsOpen >= 4)
      assert.strictEqual(reads(harness).length, 0)
      yield* harness.stop
      yield* eventually("the end of the observations", () => harness.ended.value)
      assert.strictEqual(harness.observations.length, 0)
      assert.strictEqual(harness.metrics.readings.length, 0)
      assert.strictEqual(harness.metrics.workQueueRetries.count, 0)
      yield* eventually("no session left open", () => harness.cluster.stats().execSessionsOpen === 0)
      yield* eventually("no watch left open", () => harness.cluster.stats().watchesOpen === 0)
    }),
  )
})

/** Removes GPU Feature Discovery's driver label from every node, as on a cluster without GFD. */
const unlabelDriverBranch = async (cluster: SimulatedCluster): Promise<void> => {
  for (const name of cluster.nodeNames()) {
    const response = await requestApi(cluster, `/api/v1/nodes/${name}`, {
      method: "PATCH",
      headers: { "content-type": "application/merge-patch+json" },
      body: JSON.stringify({ metadata: { labels: { "nvidia.com/cuda.driver.major": null } } }),
    })
    if (response.status !== 200) throw new Error(`unlabelling node ${name}: ${response.status}`)
  }
}
