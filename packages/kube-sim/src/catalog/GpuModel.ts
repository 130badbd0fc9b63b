import type { CloudName } from "./CloudMachine.ts"

/** The GPU models the simulated cluster can be made of. `broken-driver` hosts wear one of the others. */
export const modelNames = ["h100-hgx", "gb200-nvl72", "a100-mig", "t4", "l40s", "rtx4090"] as const
export type ModelName = (typeof modelNames)[number]

export type FleetModelName = ModelName | "broken-driver"
export const fleetModelNames: ReadonlyArray<FleetModelName> = [...modelNames, "broken-driver"]

/** PCI placement of the GPUs of one board design, in PCI (document) order, with NVLink module ids. */
export interface BusLayout {
  readonly slots: ReadonlyArray<{ readonly domain: number; readonly bus: number; readonly device: number }>
  /** Module id per slot; HGX and NVL boards number modules physically, not in PCI order. */
  readonly moduleIds: ReadonlyArray<number>
}

/** A MIG profile of an A100 80GB, with the attributes `-q -x` reports per MIG device. */
export interface MigProfile {
  readonly name: string
  readonly multiprocessors: number
  readonly copyEngines: number
  readonly decoders: number
  readonly jpegs: number
  readonly ofas: number
  readonly memoryMiB: number
  readonly bar1MiB: number
  readonly gpuInstanceIds: ReadonlyArray<number>
  /** The GPU instance profile id `nvidia-smi mig -lgip` lists for it (A100 80GB). */
  readonly gpuInstanceProfileId: number
  /** Memory slices (of 8) an instance takes; its placements start at multiples of this. */
  readonly placementSize: number
}

export interface Hosting {
  readonly cloud: CloudName
  readonly instanceType: string
  readonly layout: BusLayout
}

export interface GpuModel {
  readonly name: ModelName
  readonly productName: string
  readonly productBrand: string
  readonly architecture: string
  readonly computeCapability: string
  readonly gpuCounts: ReadonlyArray<number>
  readonly pciDeviceId: string
  readonly pciSubSystemId: string
  readonly vbiosVersion: string
  readonly boardPartNumber: string
  readonly gpuPartNumber: string
  readonly inforomImage: string
  readonly inforomOem: string
  readonly inforomEcc: string
  readonly memoryMiB: number
  readonly reservedMiB: number
  readonly bar1MiB: number
  readonly powerLimitW: number
  readonly minPowerLimitW: number
  readonly modulePowerLimitW: number | undefined
  readonly idlePowerW: number
  readonly maxGraphicsMHz: number
  readonly maxMemoryMHz: number
  readonly maxVideoMHz: number
  /** Memory clocks of the supported-clocks table, each with graphics clocks from the maximum down to this floor. */
  readonly supportedMemoryClocks: ReadonlyArray<{ readonly memoryMHz: number; readonly lowestGraphicsMHz: number }>
  readonly pcieGeneration: number
  readonly hostPcieGeneration: number
  readonly ecc: boolean
  /** Hopper and Blackwell report SRAM parity/SECDED split and per-source counters. */
  readonly detailedSramErrors: boolean
  readonly remappedRowsBanks: number | undefined
  readonly nvswitchFabric: boolean
  readonly serialAvailable: boolean
  readonly serialPrefixes: ReadonlyArray<string>
  /** Share of boards whose serial starts with `0`. */
  readonly leadingZeroShare: number
  /** Share of cloud VMs whose serial is scrubbed to zeros by the hypervisor. */
  readonly scrubbedSerialShare: number
  readonly driverBranches: ReadonlyArray<number>
  readonly hostings: ReadonlyArray<Hosting>
  /** Whether the product supports MIG at all (`N/A` otherwise); layouts are what this fleet configures. */
  readonly migCapable: boolean
  readonly migLayouts: ReadonlyArray<ReadonlyArray<string>>
}

const slots = (domain: number, buses: ReadonlyArray<number>, device = 0) =>
  buses.map((bus) => ({ domain, bus, device }))

const hgxH100Layouts = {
  pcieSwitches: {
    slots: slots(0, [0x04, 0x05, 0x0b, 0x0c, 0x84, 0x85, 0x8b, 0x8c]),
    moduleIds: [4, 2, 1, 3, 8, 6, 5, 7],
  },
  awsP5: { slots: slots(0, [0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9, 0xca]), moduleIds: [2, 4, 3, 1, 7, 5, 8, 6] },
  gcpA3: { slots: slots(0, [0x04, 0x05, 0x0a, 0x0b, 0x84, 0x85, 0x8a, 0x8b]), moduleIds: [7, 5, 6, 8, 1, 3, 4, 2] },
  azureNd: {
    slots: [1, 2, 3, 4, 5, 6, 7, 8].map((domain) => ({ domain, bus: 0, device: 0 })),
    moduleIds: [1, 3, 2, 4, 5, 7, 6, 8],
  },
} satisfies Record<string, BusLayout>

const gb200Tray: BusLayout = {
  slots: [
    { domain: 0x0008, bus: 0x01, device: 0 },
    { domain: 0x0009, bus: 0x01, device: 0 },
    { domain: 0x0018, bus: 0x01, device: 0 },
    { domain: 0x0019, bus: 0x01, device: 0 },
  ],
  moduleIds: [2, 1, 4, 3],
}

const a100Layouts = {
  awsP4de: { slots: slots(0, [0x10, 0x16, 0x20, 0x27, 0x90, 0x96, 0xa0, 0xa7]), moduleIds: [2, 4, 1, 3, 6, 8, 5, 7] },
  gcpA2: { slots: slots(0, [0x04, 0x05, 0x06, 0x07, 0x80, 0x81, 0x82, 0x83]), moduleIds: [4, 3, 2, 1, 8, 7, 6, 5] },
  dgx: { slots: slots(0, [0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd]), moduleIds: [3, 1, 4, 2, 7, 5, 8, 6] },
} satisfies Record<string, BusLayout>

const singleVm = (bus: number, device: number): BusLayout => ({ slots: [{ domain: 0, bus, device }], moduleIds: [1] })

const workstation: BusLayout = { slots: slots(0, [0x01, 0x41]), moduleIds: [0, 0] }

export const gpuModels: Readonly<Record<ModelName, GpuModel>> = {
  "h100-hgx": {
    name: "h100-hgx",
    productName: "NVIDIA H100 80GB HBM3",
    productBrand: "NVIDIA",
    architecture: "Hopper",
    computeCapability: "9.0",
    gpuCounts: [8],
    pciDeviceId: "233010DE",
    pciSubSystemId: "16C110DE",
    vbiosVersion: "96.00.A5.00.01",
    boardPartNumber: "692-2G520-0200-000",
    gpuPartNumber: "2330-885-A1",
    inforomImage: "G520.0200.00.05",
    inforomOem: "2.1",
    inforomEcc: "7.16",
    memoryMiB: 81559,
    reservedMiB: 469,
    bar1MiB: 131072,
    powerLimitW: 700,
    minPowerLimitW: 200,
    modulePowerLimitW: undefined,
    idlePowerW: 71,
    maxGraphicsMHz: 1980,
    maxMemoryMHz: 2619,
    maxVideoMHz: 1545,
    supportedMemoryClocks: [
      { memoryMHz: 2619, lowestGraphicsMHz: 345 },
      { memoryMHz: 1593, lowestGraphicsMHz: 345 },
    ],
    pcieGeneration: 5,
    hostPcieGeneration: 5,
    ecc: true,
    detailedSramErrors: true,
    remappedRowsBanks: 2560,
    nvswitchFabric: true,
    serialAvailable: true,
    serialPrefixes: ["1652923", "1652823", "1653023", "1654123"],
    leadingZeroShare: 0.05,
    scrubbedSerialShare: 0,
    driverBranches: [535, 550, 570, 580, 590],
    hostings: [
      { cloud: "aws", instanceType: "p5.48xlarge", layout: hgxH100Layouts.awsP5 },
      { cloud: "gce", instanceType: "a3-highgpu-8g", layout: hgxH100Layouts.gcpA3 },
      { cloud: "azure-vmss", instanceType: "Standard_ND96isr_H100_v5", layout: hgxH100Layouts.azureNd },
      { cloud: "oci", instanceType: "BM.GPU.H100.8", layout: hgxH100Layouts.pcieSwitches },
    ],
    migCapable: true,
    migLayouts: [],
  },
  "gb200-nvl72": {
    name: "gb200-nvl72",
    productName: "NVIDIA GB200",
    productBrand: "NVIDIA",
    architecture: "Blackwell",
    computeCapability: "10.0",
    gpuCounts: [4],
    pciDeviceId: "294110DE",
    pciSubSystemId: "204610DE",
    vbiosVersion: "97.00.B9.00.3D",
    boardPartNumber: "900-2G548-A801-000",
    gpuPartNumber: "2941-892-A1",
    inforomImage: "G548.0201.00.06",
    inforomOem: "2.1",
    inforomEcc: "7.16",
    memoryMiB: 189471,
    reservedMiB: 799,
    bar1MiB: 262144,
    powerLimitW: 1200,
    minPowerLimitW: 200,
    modulePowerLimitW: 2500,
    idlePowerW: 242,
    maxGraphicsMHz: 2062,
    maxMemoryMHz: 3996,
    maxVideoMHz: 1890,
    supportedMemoryClocks: [{ memoryMHz: 3996, lowestGraphicsMHz: 600 }],
    pcieGeneration: 6,
    hostPcieGeneration: 5,
    ecc: true,
    detailedSramErrors: true,
    remappedRowsBanks: 3968,
    nvswitchFabric: true,
    serialAvailable: true,
    serialPrefixes: ["1761025", "1761125", "1761225"],
    leadingZeroShare: 0,
    scrubbedSerialShare: 0,
    driverBranches: [570, 580, 590],
    hostings: [
      { cloud: "oci", instanceType: "BM.GPU.GB200.4", layout: gb200Tray },
      { cloud: "azure-vmss", instanceType: "Standard_ND128isr_NDR_GB200_v6", layout: gb200Tray },
      { cloud: "bare-metal", instanceType: "GB200-NVL72-tray", layout: gb200Tray },
    ],
    migCapable: true,
    migLayouts: [],
  },
  "a100-mig": {
    name: "a100-mig",
    productName: "NVIDIA A100-SXM4-80GB",
    productBrand: "NVIDIA",
    architecture: "Ampere",
    computeCapability: "8.0",
    gpuCounts: [8],
    pciDeviceId: "20B210DE",
    pciSubSystemId: "147F10DE",
    vbiosVersion: "92.00.36.00.02",
    boardPartNumber: "692-2G506-0212-002",
    gpuPartNumber: "20B2-895-A1",
    inforomImage: "G506.0212.00.01",
    inforomOem: "2.0",
    inforomEcc: "6.16",
    memoryMiB: 81920,
    reservedMiB: 641,
    bar1MiB: 131072,
    powerLimitW: 400,
    minPowerLimitW: 100,
    modulePowerLimitW: undefined,
    idlePowerW: 62,
    maxGraphicsMHz: 1410,
    maxMemoryMHz: 1593,
    maxVideoMHz: 1290,
    supportedMemoryClocks: [{ memoryMHz: 1593, lowestGraphicsMHz: 210 }],
    pcieGeneration: 4,
    hostPcieGeneration: 4,
    ecc: true,
    detailedSramErrors: false,
    remappedRowsBanks: undefined,
    nvswitchFabric: true,
    serialAvailable: true,
    serialPrefixes: ["1650522", "1651021", "1323221"],
    leadingZeroShare: 0.05,
    scrubbedSerialShare: 0,
    driverBranches: [535, 550],
    hostings: [
      { cloud: "aws", instanceType: "p4de.24xlarge", layout: a100Layouts.awsP4de },
      { cloud: "gce", instanceType: "a2-ultragpu-8g", layout: a100Layouts.gcpA2 },
      { cloud: "azure-vm", instanceType: "Standard_ND96amsr_A100_v4", layout: a100Layouts.dgx },
    ],
    migCapable: true,
    migLayouts: [
      ["1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"],
      ["3g.40gb", "3g.40gb"],
      ["1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb"],
      ["3g.40gb", "2g.20gb", "1g.10gb"],
      ["7g.80gb"],
    ],
  },
  t4: {
    name: "t4",
    productName: "Tesla T4",
    productBrand: "NVIDIA",
    architecture: "Turing",
    computeCapability: "7.5",
    gpuCounts: [1],
    pciDeviceId: "1EB810DE",
    pciSubSystemId: "12A210DE",
    vbiosVersion: "90.04.96.00.02",
    boardPartNumber: "900-2G183-0000-001",
    gpuPartNumber: "1EB8-895-A1",
    inforomImage: "G183.0200.00.02",
    inforomOem: "1.1",
    inforomEcc: "5.0",
    memoryMiB: 15360,
    reservedMiB: 448,
    bar1MiB: 256,
    powerLimitW: 70,
    minPowerLimitW: 60,
    modulePowerLimitW: undefined,
    idlePowerW: 27,
    maxGraphicsMHz: 1590,
    maxMemoryMHz: 5001,
    maxVideoMHz: 1470,
    supportedMemoryClocks: [
      { memoryMHz: 5001, lowestGraphicsMHz: 300 },
      { memoryMHz: 405, lowestGraphicsMHz: 300 },
    ],
    pcieGeneration: 3,
    hostPcieGeneration: 3,
    ecc: true,
    detailedSramErrors: false,
    remappedRowsBanks: undefined,
    nvswitchFabric: false,
    serialAvailable: true,
    serialPrefixes: ["1322119", "1322219", "1323020", "0324119"],
    leadingZeroShare: 0.15,
    scrubbedSerialShare: 0.2,
    driverBranches: [535, 550, 570, 580, 590],
    hostings: [
      { cloud: "aws", instanceType: "g4dn.xlarge", layout: singleVm(0x00, 0x1e) },
      { cloud: "gce", instanceType: "n1-standard-8", layout: singleVm(0x00, 0x04) },
    ],
    migCapable: false,
    migLayouts: [],
  },
  l40s: {
    name: "l40s",
    productName: "NVIDIA L40S",
    productBrand: "NVIDIA",
    architecture: "Ada Lovelace",
    computeCapability: "8.9",
    gpuCounts: [1],
    pciDeviceId: "26B910DE",
    pciSubSystemId: "185110DE",
    vbiosVersion: "95.02.66.00.02",
    boardPartNumber: "900-2G133-0080-000",
    gpuPartNumber: "26B9-896-A1",
    inforomImage: "G133.0242.00.03",
    inforomOem: "2.1",
    inforomEcc: "6.16",
    memoryMiB: 46068,
    reservedMiB: 561,
    bar1MiB: 65536,
    powerLimitW: 350,
    minPowerLimitW: 100,
    modulePowerLimitW: undefined,
    idlePowerW: 33,
    maxGraphicsMHz: 2520,
    maxMemoryMHz: 9001,
    maxVideoMHz: 1965,
    supportedMemoryClocks: [
      { memoryMHz: 9001, lowestGraphicsMHz: 210 },
      { memoryMHz: 5001, lowestGraphicsMHz: 210 },
      { memoryMHz: 810, lowestGraphicsMHz: 210 },
      { memoryMHz: 405, lowestGraphicsMHz: 210 },
    ],
    pcieGeneration: 4,
    hostPcieGeneration: 4,
    ecc: true,
    detailedSramErrors: true,
    remappedRowsBanks: 512,
    nvswitchFabric: false,
    serialAvailable: true,
    serialPrefixes: ["1321023", "1322123", "0654922"],
    leadingZeroShare: 0.2,
    scrubbedSerialShare: 0.25,
    driverBranches: [535, 550, 570, 580, 590],
    hostings: [
      { cloud: "aws", instanceType: "g6e.2xlarge", layout: singleVm(0x00, 0x1e) },
      { cloud: "vsphere", instanceType: "vmx-gpu-l40s", layout: singleVm(0x13, 0x00) },
      { cloud: "oci", instanceType: "VM.GPU.L40S.1", layout: singleVm(0x00, 0x04) },
    ],
    migCapable: false,
    migLayouts: [],
  },
  rtx4090: {
    name: "rtx4090",
    productName: "NVIDIA GeForce RTX 4090",
    productBrand: "GeForce",
    architecture: "Ada Lovelace",
    computeCapability: "8.9",
    gpuCounts: [1, 2],
    pciDeviceId: "268410DE",
    pciSubSystemId: "40BF1458",
    vbiosVersion: "95.02.18.80.5F",
    boardPartNumber: "N/A",
    gpuPartNumber: "2684-300-A1",
    inforomImage: "G002.0000.00.03",
    inforomOem: "2.0",
    inforomEcc: "6.16",
    memoryMiB: 24564,
    reservedMiB: 346,
    bar1MiB: 256,
    powerLimitW: 450,
    minPowerLimitW: 150,
    modulePowerLimitW: undefined,
    idlePowerW: 21,
    maxGraphicsMHz: 3105,
    maxMemoryMHz: 10501,
    maxVideoMHz: 2415,
    supportedMemoryClocks: [
      { memoryMHz: 10501, lowestGraphicsMHz: 210 },
      { memoryMHz: 10251, lowestGraphicsMHz: 210 },
      { memoryMHz: 5001, lowestGraphicsMHz: 210 },
      { memoryMHz: 810, lowestGraphicsMHz: 210 },
      { memoryMHz: 405, lowestGraphicsMHz: 210 },
    ],
    pcieGeneration: 4,
    hostPcieGeneration: 4,
    ecc: false,
    detailedSramErrors: false,
    remappedRowsBanks: 192,
    nvswitchFabric: false,
    serialAvailable: false,
    serialPrefixes: [],
    leadingZeroShare: 0,
    scrubbedSerialShare: 0,
    driverBranches: [535, 550, 570],
    hostings: [
      { cloud: "bare-metal", instanceType: "workstation", layout: workstation },
      { cloud: "kind", instanceType: "kind-worker", layout: workstation },
    ],
    migCapable: false,
    migLayouts: [],
  },
}

export const migProfiles: Readonly<Record<string, MigProfile>> = {
  "1g.10gb": {
    name: "1g.10gb",
    multiprocessors: 14,
    copyEngines: 1,
    decoders: 0,
    jpegs: 0,
    ofas: 0,
    memoryMiB: 9728,
    bar1MiB: 16383,
    gpuInstanceIds: [7, 8, 9, 10, 11, 12, 13],
    gpuInstanceProfileId: 19,
    placementSize: 1,
  },
  "1g.20gb": {
    name: "1g.20gb",
    multiprocessors: 14,
    copyEngines: 1,
    decoders: 1,
    jpegs: 0,
    ofas: 0,
    memoryMiB: 19968,
    bar1MiB: 32767,
    gpuInstanceIds: [3, 4, 5, 6],
    gpuInstanceProfileId: 15,
    placementSize: 2,
  },
  "2g.20gb": {
    name: "2g.20gb",
    multiprocessors: 28,
    copyEngines: 2,
    decoders: 1,
    jpegs: 0,
    ofas: 0,
    memoryMiB: 19968,
    bar1MiB: 32767,
    gpuInstanceIds: [3, 4, 5],
    gpuInstanceProfileId: 14,
    placementSize: 2,
  },
  "3g.40gb": {
    name: "3g.40gb",
    multiprocessors: 42,
    copyEngines: 3,
    decoders: 2,
    jpegs: 0,
    ofas: 0,
    memoryMiB: 40192,
    bar1MiB: 65535,
    gpuInstanceIds: [1, 2],
    gpuInstanceProfileId: 9,
    placementSize: 4,
  },
  "7g.80gb": {
    name: "7g.80gb",
    multiprocessors: 98,
    copyEngines: 7,
    decoders: 5,
    jpegs: 1,
    ofas: 1,
    memoryMiB: 80896,
    bar1MiB: 131071,
    gpuInstanceIds: [0],
    gpuInstanceProfileId: 0,
    placementSize: 8,
  },
}
