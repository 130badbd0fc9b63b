/**
 * The ResourceSlice NVIDIA's DRA driver v0.4.1 writes for a node with two A100-PCIE-40GB GPUs, minor 0
 * with MIG off and minor 1 with two 1g.5gb instances (the parent not published), as `resource.k8s.io/v1`
 * JSON: keys, shapes and names as `cmd/gpu-kubelet-plugin/deviceinfo.go` and `mig.go` write them.
 */
const common = {
  architecture: { string: "Ampere" },
  brand: { string: "Nvidia" },
  cudaComputeCapability: { version: "8.0.0" },
  cudaDriverVersion: { version: "13.0.0" },
  driverVersion: { version: "580.126.20" },
  productName: { string: "NVIDIA A100-PCIE-40GB" },
}

export const parentUuid = "GPU-8d3b6c2e-0f4a-1b5c-9e7d-3a2b1c0d9e8f"
export const fullGpuUuid = "GPU-2fa81118-5a5f-aa66-7660-471eed407181"
export const migUuids = ["MIG-1a2b3c4d-5e6f-5a8b-9c0d-1e2f3a4b5c6d", "MIG-7f6e5d4c-3b2a-5918-8776-655443322110"]

const migDevice = (index: number) => ({
  name: `gpu-1-mig-1g5gb-19-${index}`,
  attributes: {
    ...common,
    parentUUID: { string: parentUuid },
    profile: { string: "1g.5gb" },
    "resource.kubernetes.io/pciBusID": { string: "0000:ca:00.0" },
    "resource.kubernetes.io/pcieRoot": { string: "pci0000:c9" },
    type: { string: "mig" },
    uuid: { string: migUuids[index] },
  },
  capacity: {
    copyEngines: { value: "1" },
    memory: { value: "4864Mi" },
    [`memorySlice${index}`]: { value: "1" },
    multiprocessors: { value: "14" },
  },
})

const devicesV1 = [
  migDevice(1),
  {
    name: "gpu-0",
    attributes: {
      ...common,
      "resource.kubernetes.io/pciBusID": { string: "0000:65:00.0" },
      "resource.kubernetes.io/pcieRoot": { string: "pci0000:64" },
      type: { string: "gpu" },
      uuid: { string: fullGpuUuid },
    },
    capacity: { memory: { value: "40Gi" } },
  },
  migDevice(0),
]

export const sliceV1 = (options: { readonly generation?: number; readonly resourceVersion?: string } = {}) => ({
  apiVersion: "resource.k8s.io/v1",
  kind: "ResourceSlice",
  metadata: {
    name: "00000-gpu.nvidia.com-gpu-node-1-4lpks",
    generateName: "00000-gpu.nvidia.com-gpu-node-1-",
    resourceVersion: options.resourceVersion ?? "101",
    ownerReferences: [
      {
        apiVersion: "v1",
        kind: "Node",
        name: "gpu-node-1",
        uid: "2ed85ae9-1a62-42e6-a6ac-1a6ef5f787c1",
        controller: true,
      },
    ],
  },
  spec: {
    driver: "gpu.nvidia.com",
    nodeName: "gpu-node-1",
    pool: { name: "gpu-node-1", generation: options.generation ?? 1, resourceSliceCount: 1 },
    devices: devicesV1,
  },
})

/** The same slice read through `resource.k8s.io/v1beta1`: each device's attributes and capacity under `basic`. */
export const sliceV1beta1 = () => {
  const v1 = sliceV1()
  return {
    ...v1,
    apiVersion: "resource.k8s.io/v1beta1",
    spec: {
      ...v1.spec,
      devices: v1.spec.devices.map((device) => ({
        name: device.name,
        basic: { attributes: device.attributes, capacity: device.capacity },
      })),
    },
  }
}
