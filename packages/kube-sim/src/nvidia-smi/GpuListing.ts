import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"

/** `nvidia-smi -L`: one line per GPU with its UUID, and one per MIG device under a MIG-enabled GPU. */
export const gpuListing = (host: SimulatedHost, gpus: ReadonlyArray<HostGpu>): string =>
  gpus
    .map((gpu) => {
      const lines = [`GPU ${gpu.slot.index}: ${host.model.productName} (UUID: ${gpu.identity.uuid})`]
      gpu.identity.migProfiles.forEach((profile, index) => {
        lines.push(
          `  MIG ${profile.padEnd(12)}Device ${String(index).padStart(2)}: (UUID: ${gpu.identity.migUuids[index] ?? ""})`,
        )
      })
      return lines.map((line) => `${line}\n`).join("")
    })
    .join("")
