import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AccessDenial, AccessRules } from "./api/AccessRules.ts"
import { ApiClients } from "./api/ApiClients.ts"
import type { ApiRequestFacts } from "./api/ApiServer.ts"
import { ApiServer } from "./api/ApiServer.ts"
import { type ApiError, forbidden } from "./api/ApiStatus.ts"
import { draServerVersion, type ServerVersion, v1beta2ServerVersion } from "./api/Discovery.ts"
import type { JsonObject } from "./api/Json.ts"
import type { DeletionPolicy } from "./api/ObjectWrites.ts"
import { OpenWatches } from "./api/OpenWatches.ts"
import {
  allKinds,
  draKinds,
  namespaces,
  nodes,
  pods,
  type ResourceApiVersion,
  resourceSlices,
} from "./api/ResourceKind.ts"
import { ResourceStore } from "./api/ResourceStore.ts"
import { Fleet } from "./catalog/Fleet.ts"
import type { FleetModelName } from "./catalog/GpuModel.ts"
import { SeededRandom } from "./catalog/SeededRandom.ts"
import type { DriverFailure, SimulatedHost } from "./catalog/SimulatedHost.ts"
import { Churn, type ChurnRates } from "./cluster/Churn.ts"
import { ContainerRuntime } from "./cluster/ContainerRuntime.ts"
import { DevicePluginDaemonSet } from "./cluster/DevicePluginDaemonSet.ts"
import { draDriverChart, draKubeletPluginPod } from "./cluster/DraKubeletPluginPod.ts"
import { DraSlicePublisher } from "./cluster/DraSlicePublisher.ts"
import { nodeObject } from "./cluster/NodeObject.ts"
import { clusterMember } from "./exchange/ClusterMember.ts"
import { frameLayout } from "./exec/ChannelProtocol.ts"
import type { ExecLatency } from "./exec/ExecLatency.ts"
import { ExecLog, type ExecSession } from "./exec/ExecLog.ts"
import { PodExec } from "./exec/PodExec.ts"
import { DriverFaults } from "./faults/DriverFaults.ts"
import { FaultPlan, type FaultRates, type ScriptedFault } from "./faults/FaultPlan.ts"
import { HealthFaults } from "./faults/HealthFaults.ts"
import { writeKubeconfig } from "./Kubeconfig.ts"
import { ClusterLedger } from "./ledger/ClusterLedger.ts"
import type { GpuHistory, GpuWhereabouts } from "./ledger/FleetTruth.ts"
import type { LedgerEntry } from "./ledger/LedgerEntry.ts"
import { type TrueHealthState, trueHealthState } from "./ledger/TrueHealth.ts"
import { defaultExecLatency, defaultPodTimings, type SimulatedClusterOptions } from "./SimulatedClusterOptions.ts"
import { makeServingCertificates } from "./tls/ServingCertificates.ts"

/** One GPU as the simulated host has it now: what the service should end up reporting. */
export interface SimulatedGpuView {
  readonly index: number
  readonly uuid: string
  /** `N/A` where the product reports no serial. */
  readonly serial: string
  readonly pciBusId: string
  readonly moduleId: number
  readonly migMode: "Enabled" | "Disabled" | "N/A"
  /** The MIG devices of a GPU in MIG mode (what the DRA driver publishes instead of it); empty otherwise. */
  readonly migDevices: ReadonlyArray<{ readonly uuid: string; readonly profile: string }>
  readonly chassisSerial: string | undefined
  /** The health its board's condition amounts to now (the ledger's truth). */
  readonly health: TrueHealthState
}

export interface SimulatedNodeView {
  readonly name: string
  /** Empty for the bare-metal nodes registered without a cloud provider. */
  readonly providerId: string
  readonly model: FleetModelName
  readonly productName: string
  readonly driverVersion: string
  readonly driverFailure: DriverFailure | undefined
  readonly pod: string | undefined
  readonly gpus: ReadonlyArray<SimulatedGpuView>
}

export interface SimulatedClusterStats {
  readonly resourceVersion: number
  readonly nodes: number
  readonly pods: number
  readonly requests: number
  readonly execs: number
  readonly execSessionsOpen: number
  readonly watchesOpen: number
  /** TLS handshakes the API server completed (0 over plain HTTP), and how many of them resumed a session. */
  readonly tlsHandshakes: number
  readonly tlsResumed: number
}

/** A client of the cluster with a kubeconfig of its own: the API server tells its requests apart by its token. */
export interface SimulatedClient {
  readonly name: string
  readonly kubeconfigPath: string
  readonly token: string
}

/** Fault injection on a running cluster. */
export interface FaultControl {
  inject(fault: ScriptedFault): void
  setRates(rates: Partial<FaultRates>): void
  /** Disarms scripted faults, sets every rate to zero and repairs the drivers and GPU boards that faults broke. */
  clear(): void
  /** Resets the connections of open watches (of one resource, or all); returns how many. */
  dropWatches(resource?: string): number
  /** Keeps open watches connected but silent from now on; returns how many. */
  stallWatches(resource?: string): number
}

/** The cluster's RBAC, as the service account of gpu-serials meets it. */
export interface AccessControl {
  /** Answers matching requests 403 Forbidden from now on (e.g. `{ resource: "pods", subresource: "exec" }`). */
  deny(denial: AccessDenial): void
  allowAll(): void
}

export interface ChurnControl {
  setRates(rates: Partial<ChurnRates>): void
  readonly rates: ChurnRates
}

/** The cluster's ground truth: what happened to its nodes, pods and GPUs, and where each GPU is. */
export interface GroundTruth {
  /** Every change so far, oldest first, as the ledger file has them. */
  entries(): ReadonlyArray<LedgerEntry>
  /** Where each GPU of the cluster is now, by UUID, and whether nvidia-smi on its node reports it. */
  whereNow(): ReadonlyMap<string, GpuWhereabouts>
  /** Where a GPU has been (its stays, oldest first); undefined for a GPU the cluster never had. */
  history(uuid: string): GpuHistory | undefined
}

/** A running simulated cluster: its address, its kubeconfig, and the controls tests and the demo use. */
export interface SimulatedCluster {
  /** `https://127.0.0.1:<port>`, or `http://` with `insecureHttp`. */
  readonly url: string
  /** The CA (PEM) that signed the API server's certificate, as the kubeconfig carries it; undefined over plain HTTP. */
  readonly certificateAuthority: string | undefined
  readonly kubeconfigPath: string
  readonly token: string
  readonly namespace: string
  readonly labelSelector: string
  readonly container: string
  /** Whether the cluster runs NVIDIA's DRA driver (ResourceSlices, kubelet-plugin pods) instead of the device plugin. */
  readonly dra: boolean
  nodeNames(): ReadonlyArray<string>
  node(name: string): SimulatedNodeView | undefined
  podOf(nodeName: string): string | undefined
  /** The name of a node's ResourceSlice (DRA clusters), if it has one. */
  sliceOf(nodeName: string): string | undefined
  /** Adds a node (Ready) whose device-plugin pod then goes Pending → Running → Ready; returns its name. */
  addNode(model?: FleetModelName): string
  /** Deletes a node; its device-plugin pod is garbage-collected. */
  removeNode(nodeName: string): void
  /** Deletes the device-plugin pod of a node; the DaemonSet replaces it. Returns the deleted pod's name. */
  restartPod(nodeName: string): string
  /**
   * Moves a GPU board between two nodes (two-GPU modules on GB200); both pods restart unless
   * `restartPods` is false (with `dra`, both nodes' slices are then republished in place at once).
   * Returns the UUIDs that changed node.
   */
  swapGpus(
    first: string,
    second: string,
    options?: { readonly index?: number; readonly restartPods?: boolean },
  ): ReadonlyArray<string>
  setDriverFailure(nodeName: string, failure: DriverFailure | undefined): void
  setPodReady(nodeName: string, ready: boolean): void
  /** Changes the nvidia-smi run time from now on. */
  setExecLatency(latency: ExecLatency | number): void
  /**
   * Registers a client (e.g. one replica of a service) under its own bearer token and writes a kubeconfig
   * for it; faults and access denials can then `match` it by name, and the exec log names it.
   */
  addClient(name: string): Promise<SimulatedClient>
  /** Every exec session so far, oldest first: the client that opened it, the pod, the node, and when. */
  execLog(): ReadonlyArray<ExecSession>
  readonly faults: FaultControl
  readonly access: AccessControl
  readonly churn: ChurnControl
  readonly ledger: GroundTruth
  /** Drops the watch history: resuming from any earlier resourceVersion is now 410 Gone. */
  compactHistory(): void
  stats(): SimulatedClusterStats
  close(): Promise<void>
}

const immediateDeletion =
  (store: ResourceStore): DeletionPolicy =>
  (stored) =>
    store.delete(stored.kind, stored.namespace, stored.name)

/**
 * Starts a simulated Kubernetes cluster of GPU nodes on 127.0.0.1 and writes a kubeconfig for it. The
 * real `@kubernetes/client-node` and `kubectl` work against it unchanged.
 */
export const startSimulatedCluster = async (options: SimulatedClusterOptions = {}): Promise<SimulatedCluster> => {
  const seed = options.seed ?? "gpu-serials"
  const root = new SeededRandom(seed)
  const dra = options.dra === true
  const namespace = options.namespace ?? (dra ? draDriverChart.namespace : "gpu-operator")
  const podLabels = options.podLabels ?? (dra ? draDriverChart.labels : { app: "nvidia-device-plugin-daemonset" })
  const container = options.container ?? (dra ? draDriverChart.gpuContainer : "nvidia-device-plugin")
  const clusterName = options.clusterName ?? "gpu-sim"
  const token = options.token ?? randomBytes(24).toString("base64url")
  const now = () => new Date()
  let latency: ExecLatency = latencyOf(options.execLatency ?? defaultExecLatency)

  const storeRandom = root.fork("store")
  const store = new ResourceStore({
    historyLimit: options.historyLimit ?? 10_000,
    newUid: () => storeRandom.uuid(),
    newNameSuffix: () => storeRandom.chars("bcdfghjklmnpqrstvwxz2456789", 5),
    now,
  })
  for (const name of new Set([
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    namespace,
    ...(options.extraNamespaces ?? ["gpu-serials"]),
  ]))
    store.create(namespaces, namespaceObject(name))

  const fleet = Fleet.generate({
    nodes: options.nodes ?? 12,
    modelMix: options.modelMix ?? {},
    seed,
    clusterName,
  })
  if (options.exchange === undefined && (options.churn?.crossClusterSwapsPerMinute ?? 0) > 0)
    throw new RangeError("churn.crossClusterSwapsPerMinute needs an exchange shared with another cluster")
  options.exchange?.admit(clusterName, fleet)
  const ledger = new ClusterLedger({
    store,
    fleet,
    namespace,
    now,
    ...(options.ledgerPath === undefined ? {} : { path: options.ledgerPath }),
  })
  const daemonSetRandom = root.fork("daemonset")
  const daemonSet = new DevicePluginDaemonSet(store, fleet, {
    namespace,
    name: dra ? draDriverChart.daemonSetName : "nvidia-device-plugin-daemonset",
    // The DaemonSet controller adds the revision labels to every pod it creates.
    labels: dra
      ? {
          ...podLabels,
          "controller-revision-hash": daemonSetRandom.chars("0123456789bcdf", 10),
          "pod-template-generation": "1",
        }
      : podLabels,
    container,
    timings: { ...defaultPodTimings, ...options.podTimings },
    random: daemonSetRandom,
    now,
    ...(dra ? { podTemplate: draKubeletPluginPod } : {}),
  })
  const faults = new FaultPlan(options.faults ?? {}, root.fork("faults"))
  const slices = dra
    ? new DraSlicePublisher(store, fleet, {
        namespace,
        isPluginPod: (pod) => daemonSet.nodeOf(String(metadataName(pod))) !== undefined,
        random: root.fork("slices"),
        mismatchRate: () => faults.currentRates.draMismatch,
        report: {
          published: (node, slice, generation, gpus) => ledger.slicePublished(node, slice, generation, gpus),
          mismatched: (node, mismatch) => ledger.draMismatch(node, mismatch.uuid, mismatch.kind),
        },
      })
    : undefined
  for (const host of fleet.hosts.values()) store.create(nodes, nodeObject(host, now()))
  for (const host of fleet.hosts.values()) daemonSet.schedule(host.machine.nodeName, true)
  ledger.clusterStarted()
  const setFailure = (host: SimulatedHost, failure: DriverFailure | undefined): void => {
    fleet.setFailure(host, failure)
    ledger.driverChanged(host)
  }

  const access = new AccessRules("system:serviceaccount:gpu-serials:gpu-serials")
  const runtime = new ContainerRuntime({
    fleet,
    gpuContainer: container,
    image: dra ? "dra-kubelet-plugin" : "device-plugin",
    latency: () => latency,
    processStartMs: options.processStartMs ?? 0,
    faults,
    random: root.fork("runtime"),
    now,
    outputLayout: frameLayout,
  })
  const execLog = new ExecLog()
  const exec = new PodExec(runtime, execLog, now)
  const clients = new ApiClients(token)
  const openWatches = new OpenWatches()
  const watchRandom = root.fork("watch")
  const release = dra ? releaseServing(options.draApiVersions ?? ["v1"]) : undefined
  const certificates =
    options.insecureHttp === true
      ? undefined
      : makeServingCertificates({
          hosts: ["127.0.0.1", "localhost"],
          commonName: `${clusterName}-apiserver`,
          now: now(),
          validDays: 365,
        })
  const api = await ApiServer.listen(
    {
      store,
      clients,
      openWatches,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 10_000,
      defaultWatchTimeoutSeconds: () => options.watchTimeoutSeconds ?? watchRandom.int(1800, 3600),
      gate: (facts) => access.refusal(facts) ?? sliceWriteRefusal(facts) ?? faults.gate(facts),
      deletion: (kind) => (kind === pods ? daemonSet.deletion : immediateDeletion(store)),
      exec,
      now,
      kinds: dra ? draKinds(options.draApiVersions) : allKinds,
      ...(release === undefined ? {} : { version: release }),
    },
    options.port ?? 0,
    certificates === undefined
      ? undefined
      : { certificate: certificates.serverCertificate, key: certificates.serverKey },
  )
  const certificateAuthority = certificates?.caCertificate

  let temporaryDirectory: string | undefined
  let kubeconfigPath = options.kubeconfigPath
  if (kubeconfigPath === undefined) {
    temporaryDirectory = await mkdtemp(join(tmpdir(), "gpu-sim-"))
    kubeconfigPath = join(temporaryDirectory, "kubeconfig")
  }
  await writeKubeconfig(kubeconfigPath, {
    server: api.url,
    token,
    clusterName,
    namespace,
    ...(certificateAuthority === undefined ? {} : { certificateAuthority }),
  })
  let clientDirectory: string | undefined
  const addClient = async (name: string): Promise<SimulatedClient> => {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) throw new RangeError(`client name "${name}" is not a DNS label`)
    const clientToken = clients.add(name)
    clientDirectory ??= await mkdtemp(join(tmpdir(), "gpu-sim-clients-"))
    const path = join(clientDirectory, `kubeconfig-${name}`)
    await writeKubeconfig(path, {
      server: api.url,
      token: clientToken,
      clusterName,
      namespace,
      user: name,
      ...(certificateAuthority === undefined ? {} : { certificateAuthority }),
    })
    return { name, kubeconfigPath: path, token: clientToken }
  }

  const churnRandom = root.fork("churn")
  const hostOf = (nodeName: string): SimulatedHost => {
    const host = fleet.host(nodeName)
    if (host === undefined) throw new RangeError(`no GPU node "${nodeName}"`)
    return host
  }
  const control = {
    addNode: (model?: FleetModelName): string => {
      const host = fleet.addHost(model)
      store.create(nodes, nodeObject(host, now()))
      daemonSet.schedule(host.machine.nodeName, false)
      return host.machine.nodeName
    },
    removeNode: (nodeName: string): void => {
      hostOf(nodeName)
      store.delete(nodes, "", nodeName)
    },
    restartPod: (nodeName: string): string => daemonSet.restart(nodeName),
    swapGpus: (first: string, second: string, swap?: { readonly index?: number; readonly restartPods?: boolean }) => {
      const hosts = [hostOf(first), hostOf(second)] as const
      const moved = fleet.swapGpus(hosts[0], hosts[1], swap?.index ?? 0)
      ledger.gpusSwapped(hosts)
      if (swap?.restartPods !== false) {
        daemonSet.restart(first)
        daemonSet.restart(second)
      } else if (slices !== undefined) {
        // Without the restarts that republish them, the plugins re-enumerate the boards in place.
        slices.publish(first)
        slices.publish(second)
      }
      return moved
    },
  }
  const randomHost = (accept: (host: SimulatedHost) => boolean = () => true): SimulatedHost | undefined => {
    const candidates = [...fleet.hosts.values()].filter(accept)
    return candidates.length === 0 ? undefined : churnRandom.pick(candidates)
  }
  const churn = new Churn(
    options.churn ?? {},
    {
      restartRandomPod: () => {
        const host = randomHost((candidate) => daemonSet.podOf(candidate.machine.nodeName) !== undefined)
        if (host !== undefined) daemonSet.restart(host.machine.nodeName)
      },
      addRandomNode: () => {
        control.addNode()
      },
      removeRandomNode: () => {
        if (fleet.hosts.size <= 1) return
        const host = randomHost()
        if (host !== undefined) control.removeNode(host.machine.nodeName)
      },
      swapRandomGpus: () => {
        const first = randomHost((host) => host.failure === undefined && host.gpus.length > 0)
        if (first === undefined) return
        const second = randomHost(
          (host) => host !== first && host.model === first.model && host.failure === undefined && host.gpus.length > 0,
        )
        if (second === undefined) return
        const ready = (host: SimulatedHost) => daemonSet.podOf(host.machine.nodeName) !== undefined
        control.swapGpus(first.machine.nodeName, second.machine.nodeName, {
          index: churnRandom.int(0, first.gpus.length - 1),
          restartPods: ready(first) && ready(second),
        })
      },
      flapRandomReadiness: () => {
        const host = randomHost((candidate) => daemonSet.podOf(candidate.machine.nodeName) !== undefined)
        if (host === undefined) return
        const nodeName = host.machine.nodeName
        daemonSet.setReady(nodeName, false)
        setTimeout(() => daemonSet.setReady(nodeName, true), 1000).unref()
      },
    },
    churnRandom,
  )
  options.exchange?.join(clusterMember({ cluster: clusterName, fleet, ledger, churn, daemonSet }))
  const driverFaults = new DriverFaults({ fleet, random: root.fork("driver-faults"), setFailure })
  const healthFaults = new HealthFaults({
    fleet,
    random: root.fork("health-faults"),
    setCondition: (host, identity, condition) => {
      const before = trueHealthState(identity.condition)
      identity.condition = condition
      host.generation++
      const after = trueHealthState(condition)
      if (after !== before) ledger.healthChanged(host, identity.uuid, before, after)
    },
  })
  const faultTicker = setInterval(() => {
    const rates = faults.currentRates
    openWatches.dropRandomly(rates.watchDropPerSecond, () => watchRandom.next())
    driverFaults.tick(rates.driverFailuresPerMinute, rates.driverFailureSeconds, now().getTime())
    healthFaults.tick(rates.healthFaultsPerGpuMinute, rates.healthStageSeconds, now().getTime())
  }, 1000)
  faultTicker.unref()

  let closed = false
  return {
    url: api.url,
    certificateAuthority,
    kubeconfigPath,
    token,
    namespace,
    labelSelector:
      dra && options.podLabels === undefined
        ? draDriverChart.selector
        : Object.entries(podLabels)
            .map(([key, value]) => `${key}=${value}`)
            .join(","),
    container,
    dra,
    nodeNames: () => [...fleet.hosts.keys()].sort(),
    node: (name) => {
      const host = fleet.host(name)
      return host === undefined ? undefined : nodeView(host, daemonSet.podOf(name))
    },
    podOf: (nodeName) => daemonSet.podOf(nodeName),
    sliceOf: (nodeName) => slices?.sliceOf(nodeName),
    addNode: control.addNode,
    removeNode: control.removeNode,
    restartPod: control.restartPod,
    swapGpus: control.swapGpus,
    setDriverFailure: (nodeName, failure) => setFailure(hostOf(nodeName), failure),
    setPodReady: (nodeName, ready) => daemonSet.setReady(nodeName, ready),
    setExecLatency: (next) => {
      latency = latencyOf(next)
    },
    addClient,
    execLog: () => execLog.entries(),
    faults: {
      inject: (fault) => faults.inject(fault),
      setRates: (rates) => faults.setRates(rates),
      clear: () => {
        faults.clear()
        driverFaults.repairAll()
        healthFaults.repairAll()
      },
      dropWatches: (resource) => openWatches.drop(resource),
      stallWatches: (resource) => openWatches.stall(resource),
    },
    access: {
      deny: (denial) => access.deny(denial),
      allowAll: () => access.allowAll(),
    },
    churn: {
      setRates: (rates) => churn.setRates(rates),
      get rates() {
        return churn.currentRates
      },
    },
    ledger: {
      entries: () => ledger.entries(),
      whereNow: () => ledger.whereNow(),
      history: (uuid) => ledger.history(uuid),
    },
    compactHistory: () => store.compact(),
    stats: () => ({
      resourceVersion: store.currentRevision,
      nodes: store.count(nodes),
      pods: store.count(pods),
      requests: api.stats.requests,
      execs: runtime.execs,
      execSessionsOpen: exec.openSessions,
      watchesOpen: openWatches.size,
      tlsHandshakes: api.stats.tlsHandshakes,
      tlsResumed: api.stats.tlsResumed,
    }),
    close: async () => {
      if (closed) return
      closed = true
      options.exchange?.leave(clusterName)
      churn.stop()
      clearInterval(faultTicker)
      daemonSet.close()
      slices?.close()
      await api.close()
      await ledger.close()
      if (temporaryDirectory !== undefined) await rm(temporaryDirectory, { recursive: true, force: true })
      if (clientDirectory !== undefined) await rm(clientDirectory, { recursive: true, force: true })
    },
  }
}

/** Only the driver writes ResourceSlices: a client's write is refused as the plugin's RBAC would refuse it. */
const sliceWriteRefusal = (facts: ApiRequestFacts): ApiError | undefined =>
  facts.resource === resourceSlices.resource && !["get", "list", "watch"].includes(facts.verb)
    ? forbidden(
        "system:serviceaccount:gpu-serials:gpu-serials",
        facts.verb,
        facts.resource,
        facts.subresource,
        facts.namespace,
        facts.name,
        facts.group,
      )
    : undefined

/** The release that serves these `resource.k8s.io` versions at the newest. */
const releaseServing = (versions: ReadonlyArray<ResourceApiVersion>): ServerVersion | undefined =>
  versions.includes("v1") ? draServerVersion : versions.includes("v1beta2") ? v1beta2ServerVersion : undefined

const metadataName = (object: JsonObject): string =>
  typeof object.metadata === "object" && object.metadata !== null && !Array.isArray(object.metadata)
    ? String(object.metadata.name ?? "")
    : ""

const latencyOf = (latency: ExecLatency | number): ExecLatency =>
  typeof latency === "number" ? { kind: "fixed", ms: latency } : latency

const namespaceObject = (name: string): JsonObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
  spec: { finalizers: ["kubernetes"] },
  status: { phase: "Active" },
})

const nodeView = (host: SimulatedHost, pod: string | undefined): SimulatedNodeView => {
  const migCapable = host.model.migCapable
  return {
    name: host.machine.nodeName,
    providerId: host.machine.providerId,
    model: host.fleetModel,
    productName: host.model.productName,
    driverVersion: host.driver.version,
    driverFailure: host.failure,
    pod,
    gpus: host.gpus.map((gpu) => ({
      index: gpu.slot.index,
      uuid: gpu.identity.uuid,
      serial: gpu.identity.serial,
      pciBusId: gpu.slot.pciBusId,
      moduleId: gpu.slot.moduleId,
      migMode: migCapable ? (gpu.identity.migProfiles.length > 0 ? "Enabled" : "Disabled") : "N/A",
      migDevices: gpu.identity.migUuids.map((uuid, index) => ({
        uuid,
        profile: gpu.identity.migProfiles[index] ?? "",
      })),
      chassisSerial: host.rack?.chassisSerial,
      health: trueHealthState(gpu.identity.condition),
    })),
  }
}
