import { Writable } from "node:stream"
import {
  ApiException,
  Exec,
  KubeConfig,
  ResourceV1Api,
  ResourceV1beta1Api,
  ResourceV1beta2Api,
  type V1ResourceSlice,
  type V1Status,
  Watch,
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestApi } from "../src/ApiRequest.ts"
import { type SimulatedCluster, startSimulatedCluster } from "../src/SimulatedCluster.ts"
import { eventually } from "./Eventually.ts"

const driver = "spec.driver=gpu.nvidia.com"
const library = "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
const nvidiaSmi = "/driver-root/usr/bin/nvidia-smi"

interface ExecResult {
  readonly stdout: string
  readonly stderr: string
  readonly status: V1Status | undefined
}

const collector = () => {
  const chunks: Buffer[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk)
      callback()
    },
  })
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") }
}

/** nvidia-smi's `00000000:65:00.0` as the driver publishes it: `0000:65:00.0`. */
const sliceBusId = (pciBusId: string): string => pciBusId.slice(4).toLowerCase()

const attribute = (device: { attributes?: Record<string, { string?: string; version?: string }> }, key: string) =>
  device.attributes?.[key]?.string ?? device.attributes?.[key]?.version

describe("a cluster with NVIDIA's DRA driver", () => {
  let cluster: SimulatedCluster
  let config: KubeConfig
  let resources: ResourceV1Api

  beforeAll(async () => {
    cluster = await startSimulatedCluster({
      dra: true,
      nodes: 16,
      execLatency: 0,
      modelMix: { "a100-mig": 3, "h100-hgx": 1, t4: 1, l40s: 1 },
      podTimings: { startMs: 20, readyMs: 20, terminationMs: 20 },
    })
    config = new KubeConfig()
    config.loadFromFile(cluster.kubeconfigPath)
    resources = config.makeApiClient(ResourceV1Api)
  })

  afterAll(async () => {
    await cluster.close()
  })

  const slices = async (fieldSelector = driver): Promise<V1ResourceSlice[]> =>
    (await resources.listResourceSlice({ fieldSelector })).items

  const sliceOfNode = async (node: string): Promise<V1ResourceSlice | undefined> =>
    (await slices(`${driver},spec.nodeName=${node}`))[0]

  const exec = async (node: string, command: string[], container = cluster.container): Promise<ExecResult> => {
    const stdout = collector()
    const stderr = collector()
    let status: V1Status | undefined
    const socket = await new Exec(config).exec(
      cluster.namespace,
      cluster.podOf(node) ?? "",
      container,
      command,
      stdout.stream,
      stderr.stream,
      null,
      false,
      (received) => {
        status = received
      },
    )
    await new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) resolve()
      else socket.on("close", () => resolve())
    })
    return { stdout: stdout.text(), stderr: stderr.text(), status }
  }

  const nodeOf = (model: string, accept: (node: string) => boolean = () => true) => {
    const name = cluster.nodeNames().find((candidate) => cluster.node(candidate)?.model === model && accept(candidate))
    if (name === undefined) throw new Error(`no ${model} node`)
    return name
  }

  it("serves resource.k8s.io (v1 preferred, v1beta2, v1beta1) in discovery, with resourceslices cluster-scoped", async () => {
    const get = async (path: string) => {
      const response = await requestApi(cluster, path)
      return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown> }
    }
    const groups = await get("/apis")
    expect(groups.body.groups).toContainEqual({
      name: "resource.k8s.io",
      versions: [
        { groupVersion: "resource.k8s.io/v1", version: "v1" },
        { groupVersion: "resource.k8s.io/v1beta2", version: "v1beta2" },
        { groupVersion: "resource.k8s.io/v1beta1", version: "v1beta1" },
      ],
      preferredVersion: { groupVersion: "resource.k8s.io/v1", version: "v1" },
    })
    const list = await get("/apis/resource.k8s.io/v1")
    expect(list.body.resources).toContainEqual(
      expect.objectContaining({ name: "resourceslices", namespaced: false, kind: "ResourceSlice" }),
    )
    expect((await get("/version")).body.minor).toBe("34")
  })

  it("publishes one slice per GPU node, as the driver names and shapes it", async () => {
    const all = await slices()
    expect(all.map((slice) => slice.spec.nodeName).sort()).toEqual(cluster.nodeNames())
    for (const slice of all) {
      const node = slice.spec.nodeName ?? ""
      expect(slice.metadata?.name).toMatch(new RegExp(`^${node}-gpu\\.nvidia\\.com-[a-z0-9]{5}$`))
      expect(slice.metadata?.name).toBe(cluster.sliceOf(node))
      expect(slice.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ apiVersion: "v1", kind: "Node", name: node, controller: true }),
      ])
      expect(slice.spec.driver).toBe("gpu.nvidia.com")
      expect(slice.spec.pool).toEqual({ name: node, generation: 1, resourceSliceCount: 1 })
    }
  })

  it("lists each GPU of a node: full GPUs by minor, MIG GPUs only through their MIG devices", async () => {
    let migDevices = 0
    for (const node of cluster.nodeNames()) {
      const view = cluster.node(node)
      const slice = await sliceOfNode(node)
      const devices = slice?.spec.devices ?? []
      for (const gpu of view?.gpus ?? []) {
        const own = devices.filter(
          (device) => attribute(device, "uuid") === gpu.uuid || attribute(device, "parentUUID") === gpu.uuid,
        )
        expect(own.length).toBeGreaterThan(0)
        for (const device of own) {
          expect(attribute(device, "resource.kubernetes.io/pciBusID")).toBe(sliceBusId(gpu.pciBusId))
          expect(attribute(device, "productName")).toBe(view?.productName)
          expect(attribute(device, "driverVersion")).toBe(
            view?.driverVersion
              .split(".")
              .map((part) => String(Number(part)))
              .join("."),
          )
        }
        if (gpu.migMode === "Enabled") {
          migDevices += own.length
          expect(
            own
              .map((device) => ({ uuid: attribute(device, "uuid"), profile: attribute(device, "profile") }))
              .sort((a, b) => String(a.uuid).localeCompare(String(b.uuid))),
          ).toEqual([...gpu.migDevices].sort((a, b) => a.uuid.localeCompare(b.uuid)))
          for (const device of own) {
            expect(attribute(device, "type")).toBe("mig")
            expect(attribute(device, "uuid")).toMatch(/^MIG-/)
            expect(device.name).toMatch(new RegExp(`^gpu-${gpu.index}-mig-[0-9]g[0-9]+gb-[0-9]+-[0-7]$`))
            expect(attribute(device, "profile")).toMatch(/^[0-9]g\.[0-9]+gb$/)
          }
        } else {
          expect(own).toHaveLength(1)
          expect(own[0]?.name).toBe(`gpu-${gpu.index}`)
          expect(attribute(own[0] ?? {}, "type")).toBe("gpu")
          expect(own[0]?.capacity?.memory?.value).toMatch(/^[0-9]+(Gi|Mi)$/)
        }
      }
      const known = new Set(view?.gpus.map((gpu) => gpu.uuid))
      for (const device of devices)
        expect(known.has(attribute(device, "parentUUID") ?? attribute(device, "uuid") ?? "")).toBe(true)
    }
    expect(migDevices).toBeGreaterThan(0)
  })

  it("supports field selectors on spec.driver and spec.nodeName, and refuses others", async () => {
    const node = cluster.nodeNames()[0] ?? ""
    expect((await slices(`spec.nodeName=${node}`)).map((slice) => slice.spec.nodeName)).toEqual([node])
    expect(await slices("spec.driver=compute-domain.nvidia.com")).toEqual([])
    await expect(resources.listResourceSlice({ fieldSelector: "spec.devices=x" })).rejects.toMatchObject({ code: 400 })
  })

  it("gets a slice by name and pages lists with continue tokens", async () => {
    const node = cluster.nodeNames()[1] ?? ""
    const name = cluster.sliceOf(node) ?? ""
    expect((await resources.readResourceSlice({ name })).spec.nodeName).toBe(node)
    const first = await resources.listResourceSlice({ fieldSelector: driver, limit: 5 })
    expect(first.items).toHaveLength(5)
    const rest = await resources.listResourceSlice({
      fieldSelector: driver,
      limit: 100,
      _continue: first.metadata?._continue ?? "",
    })
    expect([...first.items, ...rest.items].map((slice) => slice.spec.nodeName).sort()).toEqual(cluster.nodeNames())
  })

  it("refuses writes from clients: only the driver writes slices", async () => {
    const error = await resources
      .createResourceSlice({
        body: {
          metadata: { name: "x" },
          spec: { driver: "gpu.nvidia.com", pool: { name: "x", generation: 1, resourceSliceCount: 1 } },
        },
      })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ApiException)
    expect((error as ApiException<unknown>).code).toBe(403)
  })

  it("watches from a resourceVersion, and answers 410 once that is compacted", async () => {
    const list = await resources.listResourceSlice({ fieldSelector: driver })
    const events: Array<{ type: string; node: string }> = []
    const watch = await new Watch(config).watch(
      "/apis/resource.k8s.io/v1/resourceslices",
      { fieldSelector: driver, resourceVersion: list.metadata?.resourceVersion ?? "", allowWatchBookmarks: true },
      (type: string, object: V1ResourceSlice) => events.push({ type, node: object.spec?.nodeName ?? "" }),
      () => undefined,
    )
    try {
      const node = cluster.addNode("t4")
      await eventually("the new node's slice", () =>
        events.some((event) => event.type === "ADDED" && event.node === node),
      )
      cluster.removeNode(node)
      await eventually("its slice deleted with it", () =>
        events.some((event) => event.type === "DELETED" && event.node === node),
      )
    } finally {
      watch.abort()
    }
    cluster.compactHistory()
    const gone = await new Promise<number>((resolve) => {
      void new Watch(config)
        .watch(
          "/apis/resource.k8s.io/v1/resourceslices",
          { resourceVersion: list.metadata?.resourceVersion ?? "" },
          (type: string, object: { code?: number }) => {
            if (type === "ERROR") resolve(object.code ?? 0)
          },
          (error: unknown) => {
            if (error instanceof Error && /410|Gone|expired/i.test(error.message)) resolve(410)
          },
        )
        .then(
          (controller) => setTimeout(() => controller.abort(), 5000).unref(),
          (error: unknown) => resolve(error instanceof ApiException ? error.code : 0),
        )
    })
    expect(gone).toBe(410)
  })

  it("republishes in place on a plugin restart: same slice and pool generation, devices in a new order", async () => {
    const node = nodeOf("h100-hgx")
    const before = await sliceOfNode(node)
    const pod = cluster.restartPod(node)
    await eventually("a new plugin pod", () => cluster.podOf(node) !== undefined && cluster.podOf(node) !== pod)
    await eventually("the republish", () =>
      cluster.ledger
        .entries()
        .some(
          (entry) =>
            entry.entry === "slice-published" &&
            entry.node === node &&
            entry.resourceVersion > Number(before?.metadata?.resourceVersion),
        ),
    )
    const after = await sliceOfNode(node)
    expect(after?.metadata?.name).toBe(before?.metadata?.name)
    expect(after?.spec.pool.generation).toBe(1)
    const names = (slice: V1ResourceSlice | undefined) => (slice?.spec.devices ?? []).map((device) => device.name)
    expect(names(after).sort()).toEqual(names(before).sort())
  })

  it("follows a GPU swap: both nodes' slices list their new GPUs once their plugins restart", async () => {
    const first = nodeOf("a100-mig")
    const second = nodeOf("a100-mig", (candidate) => candidate !== first)
    const moved = cluster.swapGpus(first, second, { index: 2 })
    await eventually("both slices to follow the swap", () => {
      const published = (node: string) =>
        cluster.ledger
          .entries()
          .filter((entry) => entry.entry === "slice-published" && entry.node === node)
          .at(-1)
      const listsAll = (node: string) => {
        const entry = published(node)
        const uuids = cluster.node(node)?.gpus.map((gpu) => gpu.uuid) ?? []
        return entry?.entry === "slice-published" && uuids.every((uuid) => entry.gpus.includes(uuid))
      }
      return listsAll(first) && listsAll(second)
    })
    const secondSlice = await sliceOfNode(second)
    const listed = new Set(
      (secondSlice?.spec.devices ?? []).map((device) => attribute(device, "parentUUID") ?? attribute(device, "uuid")),
    )
    for (const uuid of moved.filter((candidate) => cluster.node(second)?.gpus.some((gpu) => gpu.uuid === candidate)))
      expect(listed.has(uuid)).toBe(true)
  })

  it("republishes both slices in place at once for a swap without pod restarts", async () => {
    const first = nodeOf("h100-hgx")
    const second = nodeOf("h100-hgx", (candidate) => candidate !== first)
    const names = [cluster.sliceOf(first), cluster.sliceOf(second)]
    const pods = [cluster.podOf(first), cluster.podOf(second)]
    const moved = cluster.swapGpus(first, second, { index: 0, restartPods: false })
    expect(moved.length).toBeGreaterThan(0)
    expect([cluster.podOf(first), cluster.podOf(second)]).toEqual(pods)
    for (const [index, node] of [first, second].entries()) {
      const slice = await sliceOfNode(node)
      expect(slice?.metadata?.name).toBe(names[index])
      expect(slice?.spec.pool.generation).toBe(1)
      expect((slice?.spec.devices ?? []).map((device) => attribute(device, "uuid")).sort()).toEqual(
        (cluster.node(node)?.gpus ?? []).map((gpu) => gpu.uuid).sort(),
      )
    }
  })

  it("runs nvidia-smi in container gpus only from the driver root with libnvidia-ml preloaded", async () => {
    const node = nodeOf("l40s")
    const query = ["--query-gpu=index,serial,uuid,pci.bus_id", "--format=csv,noheader"]
    const gpus = cluster.node(node)?.gpus ?? []

    const preloaded = await exec(node, ["env", `LD_PRELOAD=${library}`, nvidiaSmi, ...query])
    expect(preloaded.status).toEqual({ metadata: {}, status: "Success" })
    expect(preloaded.stderr).toBe("")
    expect(
      preloaded.stdout
        .trimEnd()
        .split("\n")
        .map((line) => line.split(", ")),
    ).toEqual(gpus.map((gpu) => [String(gpu.index), gpu.serial, gpu.uuid, gpu.pciBusId]))

    const bare = await exec(node, ["nvidia-smi", ...query])
    expect(bare.status).toMatchObject({ status: "Failure", reason: "InternalError", code: 500 })
    expect(bare.status?.message).toContain('exec: "nvidia-smi": executable file not found in $PATH')

    const unloaded = await exec(node, [nvidiaSmi, ...query])
    expect(unloaded.stdout).toMatch(/^NVIDIA-SMI couldn't find libnvidia-ml\.so library in your system\./)
    expect(unloaded.status).toMatchObject({
      status: "Failure",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "12" }] },
    })

    const wrongLibrary = "/driver-root/usr/lib64/libnvidia-ml.so.1"
    const missing = await exec(node, ["env", `LD_PRELOAD=${wrongLibrary}`, nvidiaSmi, ...query])
    expect(missing.stderr).toBe(
      `ERROR: ld.so: object '${wrongLibrary}' from LD_PRELOAD cannot be preloaded (cannot open shared object file): ignored.\n`,
    )
    expect(missing.stdout).toMatch(/^NVIDIA-SMI couldn't find libnvidia-ml\.so/)
    expect(missing.status?.details?.causes?.[0]?.message).toBe("12")

    const otherContainer = await exec(node, ["env", `LD_PRELOAD=${library}`, nvidiaSmi, ...query], "compute-domains")
    expect(otherContainer.status).toMatchObject({ status: "Failure", code: 500 })
  })

  it("answers with the same faults as in device-plugin pods", async () => {
    const node = nodeOf("t4")
    cluster.setDriverFailure(node, "driver-not-loaded")
    try {
      const result = await exec(node, ["env", `LD_PRELOAD=${library}`, nvidiaSmi, "-q", "-x"])
      expect(result.stdout).toMatch(/^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/)
      expect(result.status?.details?.causes?.[0]?.message).toBe("9")
    } finally {
      cluster.setDriverFailure(node, undefined)
    }
  })

  it("runs the chart's kubelet-plugin pods and no device-plugin pods", async () => {
    const pods = await config
      .makeApiClient((await import("@kubernetes/client-node")).CoreV1Api)
      .listNamespacedPod({ namespace: "nvidia-dra-driver-gpu", labelSelector: cluster.labelSelector })
    expect(cluster.labelSelector).toBe("nvidia-dra-driver-gpu-component=kubelet-plugin")
    expect(pods.items.map((pod) => pod.spec?.nodeName).sort()).toEqual(cluster.nodeNames())
    for (const pod of pods.items) {
      expect(pod.metadata?.name).toMatch(/^nvidia-dra-driver-gpu-kubelet-plugin-[a-z0-9]{5}$/)
      expect(Object.keys(pod.metadata?.labels ?? {}).sort()).toEqual([
        "app.kubernetes.io/instance",
        "app.kubernetes.io/name",
        "controller-revision-hash",
        "nvidia-dra-driver-gpu-component",
        "pod-template-generation",
      ])
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: "DaemonSet",
        name: "nvidia-dra-driver-gpu-kubelet-plugin",
      })
      expect(pod.spec?.initContainers?.map((container) => container.name)).toEqual(["init-container"])
      expect(pod.spec?.containers.map((container) => container.name)).toEqual(["compute-domains", "gpus"])
    }
  })
})

describe("churn on a DRA cluster", () => {
  it("leaves each node's slice listing exactly its GPUs, and no slice of a node that left", async () => {
    const cluster = await startSimulatedCluster({
      dra: true,
      nodes: 8,
      execLatency: 0,
      modelMix: { "h100-hgx": 1, "a100-mig": 1 },
      podTimings: { startMs: 10, readyMs: 10, terminationMs: 10 },
      churn: {
        podRestartsPerMinute: 600,
        nodeJoinsPerMinute: 120,
        nodeLeavesPerMinute: 120,
        gpuSwapsPerMinute: 600,
        readinessFlapsPerMinute: 0,
      },
    })
    try {
      const config = new KubeConfig()
      config.loadFromFile(cluster.kubeconfigPath)
      const resources = config.makeApiClient(ResourceV1Api)
      await eventually(
        "churn to join, remove and swap",
        () => {
          const kinds = new Set(cluster.ledger.entries().map((entry) => entry.entry))
          const swapped = cluster.ledger
            .entries()
            .some((entry) => entry.entry === "gpu-placed" && entry.cause === "gpu-swap")
          return kinds.has("node-left") && kinds.has("node-joined") && swapped
        },
        30_000,
      )
      cluster.churn.setRates({
        podRestartsPerMinute: 0,
        nodeJoinsPerMinute: 0,
        nodeLeavesPerMinute: 0,
        gpuSwapsPerMinute: 0,
      })
      const agrees = async (): Promise<boolean> => {
        const slices = (await resources.listResourceSlice({ fieldSelector: driver })).items
        if (
          slices
            .map((slice) => slice.spec.nodeName)
            .sort()
            .join() !== cluster.nodeNames().join()
        )
          return false
        return slices.every((slice) => {
          const listed = new Set(
            (slice.spec.devices ?? []).map((device) => attribute(device, "parentUUID") ?? attribute(device, "uuid")),
          )
          const gpus = cluster.node(slice.spec.nodeName ?? "")?.gpus.map((gpu) => gpu.uuid) ?? []
          return listed.size === gpus.length && gpus.every((uuid) => listed.has(uuid))
        })
      }
      const deadline = Date.now() + 10_000
      while (!(await agrees())) {
        if (Date.now() > deadline) throw new Error("the slices never settled on the nodes' GPUs")
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(cluster.ledger.entries().some((entry) => entry.entry === "dra-mismatch")).toBe(false)
    } finally {
      await cluster.close()
    }
  })
})

describe("the dra-mismatch fault", () => {
  it("publishes a slice that misses a GPU of its node, recorded in the ledger, until the next republish", async () => {
    const cluster = await startSimulatedCluster({
      dra: true,
      nodes: 4,
      execLatency: 0,
      modelMix: { "h100-hgx": 1 },
      podTimings: { startMs: 10, readyMs: 10, terminationMs: 10 },
      faults: { draMismatch: 1 },
    })
    try {
      const config = new KubeConfig()
      config.loadFromFile(cluster.kubeconfigPath)
      const resources = config.makeApiClient(ResourceV1Api)
      const mismatches = cluster.ledger.entries().filter((entry) => entry.entry === "dra-mismatch")
      expect(mismatches.map((entry) => entry.node).sort()).toEqual(cluster.nodeNames())
      for (const entry of mismatches) {
        if (entry.entry !== "dra-mismatch") continue
        expect(entry.kind).toBe("missing-from-slices")
        const slice = (await resources.listResourceSlice({ fieldSelector: `spec.nodeName=${entry.node}` })).items[0]
        const listed = (slice?.spec.devices ?? []).map((device) => device.attributes?.uuid?.string)
        expect(listed).not.toContain(entry.uuid)
        expect(listed).toHaveLength((cluster.node(entry.node)?.gpus.length ?? 0) - 1)
      }
      cluster.faults.setRates({ draMismatch: 0 })
      const node = cluster.nodeNames()[0] ?? ""
      const count = cluster.ledger.entries().length
      cluster.restartPod(node)
      await eventually("the republish", () =>
        cluster.ledger
          .entries()
          .slice(count)
          .some((entry) => entry.entry === "slice-published" && entry.node === node),
      )
      const slice = (await resources.listResourceSlice({ fieldSelector: `spec.nodeName=${node}` })).items[0]
      expect(slice?.spec.devices).toHaveLength(cluster.node(node)?.gpus.length ?? -1)
    } finally {
      await cluster.close()
    }
  })

  it("serves the slices through v1beta2 and v1beta1 too, v1beta1 with each device under basic", async () => {
    const cluster = await startSimulatedCluster({ dra: true, nodes: 2, execLatency: 0, modelMix: { "a100-mig": 1 } })
    try {
      const config = new KubeConfig()
      config.loadFromFile(cluster.kubeconfigPath)
      const v1 = (await config.makeApiClient(ResourceV1Api).listResourceSlice({ fieldSelector: driver })).items
      const beta2 = (await config.makeApiClient(ResourceV1beta2Api).listResourceSlice({ fieldSelector: driver })).items
      const beta1 = (await config.makeApiClient(ResourceV1beta1Api).listResourceSlice({ fieldSelector: driver })).items
      expect(beta2.map((slice) => slice.apiVersion)).toEqual(v1.map(() => "resource.k8s.io/v1beta2"))
      expect(beta2.map((slice) => slice.spec.devices)).toEqual(v1.map((slice) => slice.spec.devices))
      expect(beta1.map((slice) => slice.metadata?.resourceVersion)).toEqual(
        v1.map((slice) => slice.metadata?.resourceVersion),
      )
      for (const [index, slice] of beta1.entries()) {
        const devices = v1[index]?.spec.devices ?? []
        expect(slice.spec.devices?.map((device) => device.name)).toEqual(devices.map((device) => device.name))
        expect(slice.spec.devices?.map((device) => device.basic?.attributes)).toEqual(
          devices.map((device) => device.attributes),
        )
      }
    } finally {
      await cluster.close()
    }
  })

  it("serves only the versions asked for, and reports the release that serves them", async () => {
    const cluster = await startSimulatedCluster({ dra: true, draApiVersions: ["v1beta1"], nodes: 1, execLatency: 0 })
    try {
      const get = async (path: string) => {
        const response = await requestApi(cluster, path)
        return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown> }
      }
      expect((await get("/apis/resource.k8s.io/v1/resourceslices")).status).toBe(404)
      expect((await get("/apis/resource.k8s.io")).body.versions).toEqual([
        { groupVersion: "resource.k8s.io/v1beta1", version: "v1beta1" },
      ])
      expect((await get("/version")).body.minor).toBe("32")
      const list = await get("/apis/resource.k8s.io/v1beta1/resourceslices")
      expect(list.body.apiVersion).toBe("resource.k8s.io/v1beta1")
      expect(list.body.items).toHaveLength(1)
    } finally {
      await cluster.close()
    }
  })

  it("is not served by a device-plugin cluster", async () => {
    const cluster = await startSimulatedCluster({ nodes: 1, execLatency: 0 })
    try {
      const response = await requestApi(cluster, "/apis/resource.k8s.io/v1/resourceslices")
      expect(response.status).toBe(404)
    } finally {
      await cluster.close()
    }
  })
})
