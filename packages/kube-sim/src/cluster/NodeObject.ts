import type { JsonObject } from "../api/Json.ts"
import { timestampOf } from "../api/ResourceStore.ts"
import { branchOf } from "../catalog/DriverRelease.ts"
import type { SimulatedHost } from "../catalog/SimulatedHost.ts"

export const kubeletVersion = "v1.32.4"

/** The Node object the kubelet of a GPU host registers, with the labels GPU Feature Discovery adds. */
export const nodeObject = (host: SimulatedHost, now: Date): JsonObject => {
  const { machine, model } = host
  const gpuCount = host.gpus.length
  const since = timestampOf(now)
  const labels: Record<string, string> = {
    ...machine.labels,
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.deploy.device-plugin": "true",
    "nvidia.com/gpu.product": model.productName.replaceAll(" ", "-"),
    "nvidia.com/gpu.count": String(gpuCount),
    "nvidia.com/gpu.memory": String(model.memoryMiB),
    "nvidia.com/gpu.family": model.architecture.toLowerCase().split(" ")[0] ?? "",
    "nvidia.com/cuda.driver.major": String(branchOf(host.driver.version)),
    "nvidia.com/cuda.runtime.major": host.driver.cudaVersion.split(".")[0] ?? "",
  }
  const migProfiles = host.gpus[0]?.identity.migProfiles ?? []
  if (model.migCapable) {
    labels["nvidia.com/mig.capable"] = "true"
    labels["nvidia.com/mig.strategy"] = "mixed"
    labels["nvidia.com/mig.config"] = migProfiles.length === 0 ? "all-disabled" : `custom-${migProfiles.join("-")}`
    labels["nvidia.com/mig.config.state"] = "success"
  }
  const capacity = {
    cpu: String(machine.cpuCores),
    "ephemeral-storage": "1967689844Ki",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    memory: `${machine.memoryKi}Ki`,
    "nvidia.com/gpu": String(gpuCount),
    pods: "110",
  }
  const spec: JsonObject = {}
  if (machine.providerId !== "") spec.providerID = machine.providerId
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: machine.nodeName,
      labels,
      annotations: {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "nvidia.com/gpu-driver-upgrade-enabled": "true",
      },
    },
    spec,
    status: {
      capacity,
      allocatable: { ...capacity, cpu: `${machine.cpuCores * 1000 - 500}m` },
      conditions: [
        condition(
          "MemoryPressure",
          "False",
          "KubeletHasSufficientMemory",
          "kubelet has sufficient memory available",
          since,
        ),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", since),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", since),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", since),
      ],
      addresses: [
        { type: "InternalIP", address: machine.internalIp },
        { type: "Hostname", address: machine.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: machine.machineId,
        systemUUID: machine.systemUuid,
        bootID: machine.bootId,
        kernelVersion: machine.kernelVersion,
        osImage: machine.osImage,
        containerRuntimeVersion: machine.containerRuntimeVersion,
        kubeletVersion,
        kubeProxyVersion: kubeletVersion,
        operatingSystem: "linux",
        architecture: "amd64",
      },
    },
  }
}

const condition = (type: string, status: string, reason: string, message: string, since: string): JsonObject => ({
  type,
  status,
  lastHeartbeatTime: since,
  lastTransitionTime: since,
  reason,
  message,
})
