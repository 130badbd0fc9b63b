import type { SeededRandom } from "./SeededRandom.ts"

/** Where a GPU node runs; decides its node name, `spec.providerID` and topology labels. */
export type CloudName = "aws" | "gce" | "azure-vmss" | "azure-vm" | "oci" | "kind" | "vsphere" | "bare-metal"

/** A group of identical machines, as a managed node group, GKE node pool, AKS agent pool or rack is. */
export interface NodePool {
  readonly id: number
  readonly cloud: CloudName
  readonly instanceType: string
  readonly name: string
  readonly region: string
  readonly zone: string
  readonly clusterName: string
  /** Cloud-specific naming parts: AKS pool number, GCP project, Azure subscription and resource group. */
  readonly naming: Readonly<Record<string, string>>
}

/** A machine's identity as a Kubernetes node shows it. */
export interface CloudMachine {
  readonly nodeName: string
  /** `spec.providerID`; empty for bare-metal nodes registered without a cloud provider. */
  readonly providerId: string
  readonly internalIp: string
  readonly labels: Readonly<Record<string, string>>
  readonly systemUuid: string
  readonly machineId: string
  readonly bootId: string
  readonly osImage: string
  readonly kernelVersion: string
  readonly containerRuntimeVersion: string
  readonly cpuCores: number
  readonly memoryKi: number
}

const awsRegions = [
  { region: "us-east-1", zones: ["us-east-1a", "us-east-1b", "us-east-1d"] },
  { region: "us-west-2", zones: ["us-west-2a", "us-west-2b", "us-west-2c"] },
  { region: "eu-west-1", zones: ["eu-west-1a", "eu-west-1b"] },
]
const gcpRegions = [
  { region: "us-central1", zones: ["us-central1-a", "us-central1-b", "us-central1-c"] },
  { region: "europe-west4", zones: ["europe-west4-a", "europe-west4-b"] },
  { region: "asia-northeast1", zones: ["asia-northeast1-a"] },
]
const azureRegions = [
  { region: "eastus", zones: ["eastus-1", "eastus-2", "eastus-3"] },
  { region: "southcentralus", zones: ["southcentralus-1", "southcentralus-2"] },
  { region: "swedencentral", zones: ["swedencentral-1"] },
]
const ociRegions = [
  { region: "us-ashburn-1", zones: ["US-ASHBURN-AD-1", "US-ASHBURN-AD-2"] },
  { region: "us-chicago-1", zones: ["US-CHICAGO-AD-1"] },
]
const onPremises = [{ region: "dc1", zones: ["dc1-row-a", "dc1-row-b"] }]

const ociRegionKeys: Readonly<Record<string, string>> = { "us-ashburn-1": "iad", "us-chicago-1": "ord" }

const generatedNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"
const lowerAlphanumeric = "abcdefghijklmnopqrstuvwxyz0123456789"

export const newNodePool = (
  id: number,
  cloud: CloudName,
  instanceType: string,
  clusterName: string,
  random: SeededRandom,
): NodePool => {
  const regions =
    cloud === "aws"
      ? awsRegions
      : cloud === "gce"
        ? gcpRegions
        : cloud === "azure-vm" || cloud === "azure-vmss"
          ? azureRegions
          : cloud === "oci"
            ? ociRegions
            : onPremises
  const { region, zones } = random.pick(regions)
  const zone = random.pick(zones)
  const family = instanceType
    .replace(/[^a-z0-9]+/gi, "")
    .toLowerCase()
    .slice(0, 8)
  switch (cloud) {
    case "aws":
      return { id, cloud, instanceType, name: `gpu-${family}-${id}`, region, zone, clusterName, naming: {} }
    case "gce":
      return {
        id,
        cloud,
        instanceType,
        name: `gpu-pool-${id}`,
        region,
        zone,
        clusterName,
        naming: { project: `gpu-prod-${random.digits(6)}`, poolHash: random.hex(8) },
      }
    case "azure-vm":
    case "azure-vmss":
      return {
        id,
        cloud,
        instanceType,
        name: `gpu${id}`,
        region,
        zone,
        clusterName,
        naming: {
          poolNumber: random.digits(8),
          subscription: random.uuid(),
          resourceGroup: `MC_${clusterName}-rg_${clusterName}_${region}`,
        },
      }
    case "oci":
      return { id, cloud, instanceType, name: `gpu-np-${id}`, region, zone, clusterName, naming: {} }
    case "kind":
      return { id, cloud, instanceType, name: "kind", region, zone, clusterName: `kind-gpu-${id}`, naming: {} }
    case "vsphere":
      return { id, cloud, instanceType, name: `esxi-gpu-${id}`, region, zone, clusterName, naming: {} }
    case "bare-metal":
      return {
        id,
        cloud,
        instanceType,
        name: `rack-${String(id).padStart(2, "0")}`,
        region,
        zone,
        clusterName,
        naming: {},
      }
  }
}

/** Creates the next machine of a pool: `ordinal` counts machines in the pool, `hostNumber` in the fleet. */
export const newMachine = (pool: NodePool, ordinal: number, hostNumber: number, random: SeededRandom): CloudMachine => {
  const internalIp = `10.${16 + ((hostNumber >> 16) & 0x0f)}.${(hostNumber >> 8) & 0xff}.${hostNumber & 0xff}`
  const [nodeName, providerId] = identity(pool, ordinal, internalIp, random)
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": nodeName,
    "kubernetes.io/os": "linux",
    "node.kubernetes.io/instance-type": pool.instanceType,
    "topology.kubernetes.io/region": pool.region,
    "topology.kubernetes.io/zone": pool.zone,
    ...poolLabels(pool),
  }
  const image = osImageOf(pool.cloud)
  return {
    nodeName,
    providerId,
    internalIp,
    labels,
    systemUuid: random.uuid().toUpperCase(),
    machineId: random.hex(32),
    bootId: random.uuid(),
    osImage: image.osImage,
    kernelVersion: image.kernelVersion,
    containerRuntimeVersion: image.containerRuntimeVersion,
    cpuCores: pool.cloud === "kind" || pool.instanceType === "workstation" ? 32 : random.pick([48, 96, 128, 192]),
    memoryKi: random.pick([196608, 1048576, 2097152]) * 1024,
  }
}

const identity = (pool: NodePool, ordinal: number, ip: string, random: SeededRandom): [string, string] => {
  const dashed = ip.replaceAll(".", "-")
  switch (pool.cloud) {
    case "aws": {
      const domain = pool.region === "us-east-1" ? "ec2.internal" : `${pool.region}.compute.internal`
      return [`ip-${dashed}.${domain}`, `aws:///${pool.zone}/i-0${random.hex(16)}`]
    }
    case "gce": {
      const name = `gke-${pool.clusterName}-${pool.name}-${pool.naming.poolHash}-${random.chars(lowerAlphanumeric, 4)}`
      return [name, `gce://${pool.naming.project}/${pool.zone}/${name}`]
    }
    case "azure-vmss": {
      const scaleSet = `aks-${pool.name}-${pool.naming.poolNumber}-vmss`
      const name = `${scaleSet}${ordinal.toString(36).padStart(6, "0")}`
      return [
        name,
        `azure:///subscriptions/${pool.naming.subscription}/resourceGroups/${pool.naming.resourceGroup?.toLowerCase()}/providers/Microsoft.Compute/virtualMachineScaleSets/${scaleSet}/virtualMachines/${ordinal}`,
      ]
    }
    case "azure-vm": {
      const name = `aks-${pool.name}-${pool.naming.poolNumber}-${ordinal}`
      return [
        name,
        `azure:///subscriptions/${pool.naming.subscription}/resourceGroups/${pool.naming.resourceGroup?.toLowerCase()}/providers/Microsoft.Compute/virtualMachines/${name}`,
      ]
    }
    case "oci": {
      const ocid = `ocid1.instance.oc1.${ociRegionKeys[pool.region] ?? "iad"}.an${random.chars(lowerAlphanumeric, 58)}`
      return [ip, random.chance(0.5) ? ocid : `oci://${ocid}`]
    }
    case "kind": {
      const name = `${pool.clusterName}-worker${ordinal === 0 ? "" : ordinal + 1}`
      return [name, `kind://docker/${pool.clusterName}/${name}`]
    }
    case "vsphere":
      return [
        `gpu-worker-${String(ordinal + 1).padStart(2, "0")}-${random.chars(generatedNameAlphabet, 5)}`,
        `vsphere://${random.uuid()}`,
      ]
    case "bare-metal":
      return [
        `${pool.instanceType.startsWith("GB200") ? "gb200" : "gpu"}-${pool.name}-${String(ordinal + 1).padStart(2, "0")}`,
        "",
      ]
  }
}

const poolLabels = (pool: NodePool): Record<string, string> => {
  switch (pool.cloud) {
    case "aws":
      return {
        "eks.amazonaws.com/nodegroup": pool.name,
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "failure-domain.beta.kubernetes.io/region": pool.region,
        "failure-domain.beta.kubernetes.io/zone": pool.zone,
      }
    case "gce":
      return {
        "cloud.google.com/gke-nodepool": pool.name,
        "cloud.google.com/machine-family": pool.instanceType.split("-")[0] ?? "",
      }
    case "azure-vm":
    case "azure-vmss":
      return {
        "kubernetes.azure.com/agentpool": pool.name,
        "kubernetes.azure.com/cluster": pool.naming.resourceGroup ?? "",
        agentpool: pool.name,
      }
    case "oci":
      return { "oci.oraclecloud.com/fault-domain": "FAULT-DOMAIN-1", "node.info.ds_proxymux_client": "true" }
    case "kind":
      return {}
    case "vsphere":
      return { "node.cluster.x-k8s.io/esxi-host": `${pool.name}.dc1.local` }
    case "bare-metal":
      return { "nvidia.com/gpu.clique": pool.name }
  }
}

const osImageOf = (cloud: CloudName) => {
  switch (cloud) {
    case "aws":
      return {
        osImage: "Amazon Linux 2023.7.20250512",
        kernelVersion: "6.1.134-152.225.amzn2023.x86_64",
        containerRuntimeVersion: "containerd://1.7.27",
      }
    case "gce":
      return {
        osImage: "Container-Optimized OS from Google",
        kernelVersion: "6.6.72+",
        containerRuntimeVersion: "containerd://1.7.24",
      }
    case "azure-vm":
    case "azure-vmss":
      return {
        osImage: "Ubuntu 22.04.5 LTS",
        kernelVersion: "5.15.0-1089-azure",
        containerRuntimeVersion: "containerd://1.7.27-1",
      }
    case "oci":
      return {
        osImage: "Oracle Linux Server 8.10",
        kernelVersion: "5.15.0-307.178.5.el8uek.x86_64",
        containerRuntimeVersion: "cri-o://1.32.4",
      }
    case "kind":
      return {
        osImage: "Debian GNU/Linux 12 (bookworm)",
        kernelVersion: "6.8.0-60-generic",
        containerRuntimeVersion: "containerd://2.0.3",
      }
    case "vsphere":
    case "bare-metal":
      return {
        osImage: "Ubuntu 24.04.2 LTS",
        kernelVersion: "6.8.0-60-generic",
        containerRuntimeVersion: "containerd://1.7.27",
      }
  }
}
