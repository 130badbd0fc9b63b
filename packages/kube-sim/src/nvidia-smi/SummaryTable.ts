import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { readingsOf } from "./GpuReadings.ts"
import { reportTimestamp } from "./ReportTimestamp.ts"

const rule = `+${"-".repeat(89)}+`
const gpuRule = `+${"-".repeat(41)}+${"-".repeat(24)}+${"-".repeat(22)}+`

/** `nvidia-smi` without arguments: the 91-column summary table. */
export const summaryTable = (host: SimulatedHost, gpus: ReadonlyArray<HostGpu>, now: Date): string => {
  const { model, driver } = host
  const lines = [
    `${reportTimestamp(now)}       `,
    rule,
    `${`| NVIDIA-SMI ${driver.version}`.padEnd(36)}${`Driver Version: ${driver.version}`.padEnd(31)}${`CUDA Version: ${driver.cudaVersion}`.padEnd(23)}|`,
    gpuRule,
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
    "|                                         |                        |               MIG M. |",
    `|${"=".repeat(41)}+${"=".repeat(24)}+${"=".repeat(22)}|`,
  ]
  for (const gpu of gpus) {
    const readings = readingsOf(model, gpu.identity)
    const name = model.productName.length > 27 ? `${model.productName.slice(0, 24)}...` : model.productName
    const mig = !model.migCapable ? "N/A" : gpu.identity.migProfiles.length > 0 ? "Enabled" : "Disabled"
    const fan = model.productBrand === "GeForce" ? `${30 + (gpu.identity.variance % 20)}%` : "N/A"
    const util = gpu.identity.migProfiles.length > 0 ? "N/A" : "0%"
    lines.push(
      `| ${String(gpu.slot.index).padStart(3)}  ${name.padEnd(30)}${"On".padStart(3)}  |   ${gpu.slot.pciBusId} Off |${(model.ecc ? (gpu.identity.migProfiles.length > 0 ? "On" : "0") : "Off").padStart(21)} |`,
      `| ${fan.padStart(3)}${`${readings.temperatureC}C`.padStart(6)}${"P0".padStart(6)}${`${Math.round(readings.powerDrawW)}W`.padStart(16)} / ${`${model.powerLimitW}W`.padStart(5)} |${`${readings.memoryUsedMiB}MiB`.padStart(11)} / ${`${model.memoryMiB}MiB`.padStart(9)} |${util.padStart(8)}${"Default".padStart(13)} |`,
      `|${" ".repeat(41)}|${" ".repeat(24)}|${mig.padStart(21)} |`,
      gpuRule,
    )
  }
  lines.push(
    "",
    rule,
    `| Processes:${" ".repeat(78)}|`,
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
    "|        ID   ID                                                               Usage      |",
    `|${"=".repeat(89)}|`,
    `|  No running processes found${" ".repeat(61)}|`,
    rule,
  )
  return lines.map((line) => `${line}\n`).join("")
}
