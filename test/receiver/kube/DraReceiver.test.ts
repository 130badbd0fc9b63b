import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { NodeReading } from "../../../src/domain/NodeReading.ts"
import { type ResourceSlice, resourceSliceOf } from "../../../src/kubeclient/resource/ResourceSlice.ts"
import type { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { draNodeDevicesOf, nvidiaGpuDriverSelector } from "../../../src/receiver/kube/dra/DraDevices.ts"
import { draDefaults, type KubeExecConfig } from "../../../src/receiver/kube/KubeExecConfig.ts"
import { factory as kubeExecFactory } from "../../../src/receiver/kube/KubeExecFactory.ts"
import { eventually, type Harness, reads, startHarness } from "./ReceiverHarness.ts"

const draConfig: Partial<KubeExecConfig> = {
  discovery: "dra",
  resyncMs: 0,
  nvidiaSmi: {
    ...kubeExecFactory.defaultConfig.nvidiaSmi,
    path: draDefaults.nvidiaSmiPath,
    mlLibrary: draDefaults.nvidiaMlLibrary,
  },
}

const draCluster = { dra: true, nodes: 5, modelMix: { "a100-mig": 2, "h100-hgx": 1, t4: 1 } } as const

/** Every slice of the NVIDIA driver, listed as a user would, through the receiver's own client. */
const listedSlices = (api: KubeApi["Service"]) =>
  api.listResourceSlices("v1", nvidiaGpuDriverSelector, { limit: 500 }).pipe(
    Effect.map((page) =>
      page.items.map(resourceSliceOf).filter((slice): slice is ResourceSlice => slice !== undefined),
    ),
    Effect.orDie,
  )

/** The UUIDs of each node's GPUs as the slices list them. */
const sliceUuidsByNode = (slices: ReadonlyArray<ResourceSlice>): Map<string, Set<string>> => {
  const byNode = new Map<string, Array<ResourceSlice>>()
  for (const slice of slices) byNode.set(slice.nodeName, [...(byNode.get(slice.nodeName) ?? []), slice])
  return new Map(
    [...byNode].map(([node, nodeSlices]) => [
      node,
      new Set(draNodeDevicesOf(node, nodeSlices).gpus.map((gpu) => gpu.uuid)),
    ]),
  )
}

/** The latest reading of each node. */
const latestReadings = (harness: Harness): Map<string, NodeReading> =>
  new Map(reads(harness).map((read) => [read.node.name, read.reading]))

const everyNodeRead = (harness: Harness, format: (reading: NodeReading) => boolean) => () => {
  const latest = latestReadings(harness)
  return harness.cluster.nodeNames().every((node) => {
    const reading = latest.get(node)
    return reading !== undefined && format(reading)
  })
}

describe("kube_exec with DISCOVERY=dra", () => {
  it.live("reads every node through the kubelet-plugin pods, each UUID one the slices list and the reverse", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ cluster: draCluster, config: draConfig })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, (reading) => reading.format !== "resourceslices"),
      )
      const slices = sliceUuidsByNode(yield* listedSlices(harness.api))
      for (const [node, reading] of latestReadings(harness)) {
        const read = new Set(reading.gpus.map((gpu) => gpu.uuid))
        assert.deepStrictEqual([...read].sort(), [...(slices.get(node) ?? [])].sort(), node)
        assert.isTrue(reading.gpus.every((gpu) => gpu.serial !== undefined))
      }
      // nvidia-smi from the driver root, NVML preloaded, argv only.
      assert.isTrue(harness.execs.length > 0)
      for (const exec of harness.execs) {
        assert.strictEqual(exec.container, "gpus")
        assert.deepStrictEqual(exec.argv.slice(0, 3), [
          "env",
          `LD_PRELOAD=${draDefaults.nvidiaMlLibrary}`,
          draDefaults.nvidiaSmiPath,
        ])
      }
      // GPUs in MIG mode carry the MIG devices their slices list.
      const migGpus = [...latestReadings(harness).values()].flatMap((reading) =>
        reading.gpus.filter((gpu) => gpu.migMode === "Enabled"),
      )
      assert.isTrue(migGpus.length > 0)
      assert.isTrue(
        migGpus.every((gpu) => (gpu.migDevices?.length ?? 0) > 0 && gpu.migDevices?.[0]?.uuid.startsWith("MIG-")),
      )
      assert.deepStrictEqual(harness.metrics.draMismatches, {})
    }),
  )

  it.live("reads the slices of a server that serves only v1beta1", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { ...draCluster, draApiVersions: ["v1beta1"] },
        config: draConfig,
      })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, (reading) => reading.format !== "resourceslices"),
      )
      const migGpus = [...latestReadings(harness).values()].flatMap((reading) =>
        reading.gpus.filter((gpu) => gpu.migMode === "Enabled"),
      )
      assert.isTrue(migGpus.length > 0 && migGpus.every((gpu) => (gpu.migDevices?.length ?? 0) > 0))
      assert.deepStrictEqual(harness.metrics.draMismatches, {})
    }),
  )

  it.live("reports each injected mismatch once per node, the reading staying the truth", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { ...draCluster, modelMix: { "h100-hgx": 1 }, faults: { draMismatch: 1 } },
        config: draConfig,
      })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, (reading) => reading.format !== "resourceslices"),
      )
      const injected = harness.cluster.ledger
        .entries()
        .filter((entry) => entry.entry === "dra-mismatch")
        .map((entry) => (entry.entry === "dra-mismatch" ? `${entry.node} ${entry.uuid}` : ""))
        .sort()
      assert.isTrue(injected.length > 0)
      yield* eventually(
        "every mismatch warned",
        () => harness.logEvents().filter((event) => event.warning === "dra-mismatch").length === injected.length,
      )
      const warned = harness
        .logEvents()
        .filter((event) => event.warning === "dra-mismatch")
        .map((event) => `${String(event.node)} ${String(event.missingFromSlices)}`)
        .sort()
      assert.deepStrictEqual(warned, injected)
      assert.strictEqual(harness.metrics.draMismatches["missing-from-slices"], injected.length)
      // The reading keeps the GPU the slice left out.
      for (const entry of injected) {
        const [node = "", uuid = ""] = entry.split(" ")
        assert.isTrue(
          latestReadings(harness)
            .get(node)
            ?.gpus.some((gpu) => gpu.uuid === uuid) ?? false,
        )
      }
    }),
  )

  it.live("yields serial-less GPUs from the slices when exec is refused, and readiness says why", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: draCluster,
        config: draConfig,
        before: (cluster) => cluster.access.deny({ resource: "pods", subresource: "exec" }),
      })
      yield* eventually(
        "every node from its slices",
        everyNodeRead(harness, (reading) => reading.format === "resourceslices"),
      )
      const slices = sliceUuidsByNode(yield* listedSlices(harness.api))
      for (const [node, reading] of latestReadings(harness)) {
        assert.deepStrictEqual(reading.gpus.map((gpu) => gpu.uuid).sort(), [...(slices.get(node) ?? [])].sort())
        for (const gpu of reading.gpus) {
          assert.isUndefined(gpu.serial)
          assert.isDefined(gpu.product)
          assert.match(gpu.pciBusId ?? "", /^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9A-F]$/)
        }
        // index: rank by PCI bus id.
        const byPci = [...reading.gpus].sort((a, b) => ((a.pciBusId ?? "") < (b.pciBusId ?? "") ? -1 : 1))
        assert.deepStrictEqual(
          byPci.map((gpu) => gpu.index),
          byPci.map((_, index) => index),
        )
      }
      const readings = yield* harness.receiver.readings
      assert.isTrue(readings.healthy)
      assert.match(readings.message ?? "", /ResourceSlices alone.*exec-forbidden/)
      assert.strictEqual(harness.metrics.sliceOnlyNodes().get("exec-forbidden"), harness.cluster.nodeNames().length)
    }),
  )
})

describe("kube_exec with DISCOVERY=dra, as slices change", () => {
  it.live("reads a node again when its slices change identity, and only that node", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({
        cluster: { ...draCluster, modelMix: { "h100-hgx": 1 } },
        config: draConfig,
      })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, (reading) => reading.format !== "resourceslices"),
      )
      const [first = "", second = "", third = ""] = harness.cluster.nodeNames()
      const readsOf = (node: string) => reads(harness).filter((read) => read.node.name === node).length
      const before = { first: readsOf(first), third: readsOf(third) }
      const uuidsOn = (node: string) =>
        (
          latestReadings(harness)
            .get(node)
            ?.gpus.map((gpu) => gpu.uuid) ?? []
        )
          .sort()
          .join(",")
      const was = { first: uuidsOn(first), second: uuidsOn(second) }
      harness.cluster.swapGpus(first, second, { restartPods: false })
      yield* eventually(
        "both nodes read with the swapped boards",
        () => uuidsOn(first) !== was.first && uuidsOn(second) !== was.second,
      )
      assert.isTrue(readsOf(first) > before.first)
      assert.strictEqual(readsOf(third), before.third)
    }),
  )

  it.live("yields a node whose plugin pod is not ready from its slices, and reads it once ready", () =>
    Effect.gen(function* () {
      let waiting = ""
      const harness = yield* startHarness({
        cluster: draCluster,
        config: draConfig,
        before: (cluster) => {
          waiting = cluster.nodeNames()[0] ?? ""
          cluster.setPodReady(waiting, false)
        },
      })
      yield* eventually(
        "the node from its slices",
        () => latestReadings(harness).get(waiting)?.format === "resourceslices",
      )
      assert.strictEqual(harness.metrics.sliceOnlyNodes().get("pod-not-ready"), 1)
      assert.match((yield* harness.receiver.readings).message ?? "", /pod-not-ready 1/)
      harness.cluster.setPodReady(waiting, true)
      yield* eventually("the node read", () => latestReadings(harness).get(waiting)?.format !== "resourceslices")
      assert.isTrue(
        latestReadings(harness)
          .get(waiting)
          ?.gpus.every((gpu) => gpu.serial !== undefined) ?? false,
      )
      assert.strictEqual(harness.metrics.sliceOnlyNodes().size, 0)
    }),
  )
})

describe("kube_exec with DISCOVERY=auto", () => {
  const autoConfig: Partial<KubeExecConfig> = { discovery: "auto", resyncMs: 0 }
  const decision = (harness: Harness) =>
    harness.logEvents().find((event) => String(event.msg ?? "").startsWith("DISCOVERY=auto"))

  it.live("picks dra against a cluster with the DRA driver, and says why", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ cluster: draCluster, config: autoConfig })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, (reading) => reading.format !== "resourceslices"),
      )
      assert.strictEqual(decision(harness)?.discovery, "dra")
      assert.match(String(decision(harness)?.reason), /gpu\.nvidia\.com/)
      assert.isTrue(harness.execs.every((exec) => exec.container === "gpus" && exec.argv[0] === "env"))
    }),
  )

  it.live("picks device-plugin against a cluster with device-plugin pods", () =>
    Effect.gen(function* () {
      const harness = yield* startHarness({ config: autoConfig })
      yield* eventually(
        "every node read",
        everyNodeRead(harness, () => true),
      )
      assert.strictEqual(decision(harness)?.discovery, "device-plugin")
      assert.match(String(decision(harness)?.reason), /resource\.k8s\.io|gpu\.nvidia\.com/)
      assert.isTrue(harness.execs.every((exec) => exec.argv[0] === "nvidia-smi"))
    }),
  )
})
