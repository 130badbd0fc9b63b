import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { readingsOf, wattsText } from "./GpuReadings.ts"

/** Everything in a `<gpu>` element that differs between GPUs of the same model and driver, as text. */
export interface GpuFacts {
  readonly busId: string
  readonly serial: string
  readonly uuid: string
  readonly pdi: string
  readonly minorNumber: string
  readonly boardId: string
  readonly moduleId: string
  readonly chassisSerial: string
  readonly slotNumber: string
  readonly trayIndex: string
  readonly hostId: string
  readonly peerType: string
  readonly fabricGuid: string
  readonly migDevices: string
  readonly bbxDuration: string
  readonly virtualizationMode: string
  readonly pciBus: string
  readonly pciDevice: string
  readonly pciDomain: string
  readonly maxHostLinkGeneration: string
  readonly txUtilization: string
  readonly rxUtilization: string
  readonly fanSpeed: string
  readonly memoryUsed: string
  readonly memoryFree: string
  readonly temperature: string
  readonly temperatureToLimit: string
  readonly memoryTemperature: string
  readonly powerDraw: string
  readonly instantPowerDraw: string
  readonly memoryPowerDraw: string
  readonly modulePowerDraw: string
  readonly graphicsClock: string
  readonly memoryClock: string
  readonly videoClock: string
  readonly cliqueId: string
  readonly clusterUuid: string
  readonly fabricBandwidth: string
  readonly fabricRouteRecovery: string
  readonly fabricRouteUnhealthy: string
  readonly fabricAccessTimeoutRecovery: string
  readonly fabricIncorrectConfiguration: string
  readonly fabricPartitionAssigned: string
}

export const gpuFactNames: ReadonlyArray<keyof GpuFacts> = [
  "busId",
  "serial",
  "uuid",
  "pdi",
  "minorNumber",
  "boardId",
  "moduleId",
  "chassisSerial",
  "slotNumber",
  "trayIndex",
  "hostId",
  "peerType",
  "fabricGuid",
  "migDevices",
  "bbxDuration",
  "virtualizationMode",
  "pciBus",
  "pciDevice",
  "pciDomain",
  "maxHostLinkGeneration",
  "txUtilization",
  "rxUtilization",
  "fanSpeed",
  "memoryUsed",
  "memoryFree",
  "temperature",
  "temperatureToLimit",
  "memoryTemperature",
  "powerDraw",
  "instantPowerDraw",
  "memoryPowerDraw",
  "modulePowerDraw",
  "graphicsClock",
  "memoryClock",
  "videoClock",
  "cliqueId",
  "clusterUuid",
  "fabricBandwidth",
  "fabricRouteRecovery",
  "fabricRouteUnhealthy",
  "fabricAccessTimeoutRecovery",
  "fabricIncorrectConfiguration",
  "fabricPartitionAssigned",
]

const hex = (value: number, width: number) => value.toString(16).toUpperCase().padStart(width, "0")

/** The facts of one GPU in its host; `migDevices` renders the MIG instances when MIG is enabled. */
export const gpuFactsOf = (host: SimulatedHost, gpu: HostGpu, migDevices: (gpu: HostGpu) => string): GpuFacts => {
  const { model, rack } = host
  const { slot, identity } = gpu
  const readings = readingsOf(model, identity)
  const inRack = rack !== undefined
  const uuidHex = identity.uuid.slice(4).replaceAll("-", "")
  return {
    busId: slot.pciBusId,
    serial: identity.serial,
    uuid: identity.uuid,
    pdi: `0x${uuidHex.slice(0, 16)}`,
    minorNumber: String(slot.minorNumber),
    boardId: `0x${((slot.domain << 16) | (slot.bus << 8) | slot.device).toString(16)}`,
    moduleId: String(slot.moduleId),
    chassisSerial: rack?.chassisSerial ?? "N/A",
    slotNumber: rack === undefined ? "N/A" : String(rack.slotNumber),
    trayIndex: rack === undefined ? "N/A" : String(rack.trayIndex),
    hostId: rack === undefined ? "N/A" : String(rack.hostId),
    peerType: inRack ? "Switch Connected" : "N/A",
    fabricGuid: identity.fabricGuid,
    migDevices: identity.migProfiles.length > 0 ? migDevices(gpu) : "",
    bbxDuration: `${20000 + identity.variance * 7} us`,
    virtualizationMode: host.pool.cloud === "bare-metal" || host.pool.cloud === "kind" ? "None" : "Pass-Through",
    pciBus: hex(slot.bus, 2),
    pciDevice: hex(slot.device, 2),
    pciDomain: hex(slot.domain, 4),
    maxHostLinkGeneration: host.pool.cloud === "bare-metal" ? String(model.hostPcieGeneration) : "N/A",
    txUtilization: `${readings.txKBs} KB/s`,
    rxUtilization: `${readings.rxKBs} KB/s`,
    fanSpeed: model.productBrand === "GeForce" ? `${30 + (identity.variance % 20)} %` : "N/A",
    memoryUsed: `${readings.memoryUsedMiB} MiB`,
    memoryFree: `${model.memoryMiB - model.reservedMiB - readings.memoryUsedMiB} MiB`,
    temperature: `${readings.temperatureC} C`,
    temperatureToLimit: `${87 - readings.temperatureC} C`,
    memoryTemperature: `${readings.memoryTemperatureC} C`,
    powerDraw: wattsText(readings.powerDrawW),
    instantPowerDraw: wattsText(readings.powerDrawW + 0.38),
    memoryPowerDraw: wattsText(readings.memoryPowerDrawW),
    modulePowerDraw: wattsText(readings.powerDrawW * 2.5),
    graphicsClock: `${readings.graphicsClockMHz} MHz`,
    memoryClock: `${readings.memoryClockMHz} MHz`,
    videoClock: `${readings.videoClockMHz} MHz`,
    cliqueId: inRack ? String(rack.cliqueId) : model.nvswitchFabric ? "0" : "N/A",
    clusterUuid: inRack ? rack.clusterUuid : model.nvswitchFabric ? "00000000-0000-0000-0000-000000000000" : "N/A",
    fabricBandwidth: inRack ? "Full" : "N/A",
    fabricRouteRecovery: inRack ? "False" : "N/A",
    fabricRouteUnhealthy: inRack ? "False" : "N/A",
    fabricAccessTimeoutRecovery: inRack ? "False" : "N/A",
    fabricIncorrectConfiguration: inRack ? "None" : "N/A",
    fabricPartitionAssigned: inRack ? "True" : "N/A",
  }
}
