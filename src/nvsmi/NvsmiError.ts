import * as Schema from "effect/Schema"
import type { GpuFailure } from "../domain/NodeReading.ts"

/**
 * Why a run of nvidia-smi gave no usable reading. Each error has a stable `kind` (a bounded metric label),
 * a short user-facing `message`, and at most a 120-character single-line excerpt of the output.
 */
export type NvsmiError =
  | EmptyOutput
  | OutputTooLarge
  | NotNvidiaSmiOutput
  | TruncatedOutput
  | MalformedOutput
  | NoDevicesFound
  | DriverNotLoaded
  | NvmlVersionMismatch
  | NvmlInitFailed
  | DeviceHandleFailure
  | GpuRequiresReset
  | UnsupportedQueryField
  | CommandFailed

export type NvsmiErrorKind = NvsmiError["kind"]

export const nvsmiErrorKinds: ReadonlyArray<NvsmiErrorKind> = [
  "empty",
  "output-too-large",
  "not-nvidia-smi",
  "truncated",
  "malformed",
  "no-devices",
  "driver-not-loaded",
  "nvml-version-mismatch",
  "nvml-init-failed",
  "device-handle",
  "gpu-requires-reset",
  "unsupported-query-field",
  "command-failed",
]

const GpuFailureSchema = Schema.Struct({
  kind: Schema.Literals(["device-handle", "requires-reset", "lost", "unidentified", "duplicate-uuid"]),
  index: Schema.optionalKey(Schema.Number),
  pciBusId: Schema.optionalKey(Schema.String),
  reason: Schema.String,
})

export class EmptyOutput extends Schema.TaggedError<EmptyOutput>()("EmptyOutput", {}) {
  readonly kind = "empty" as const
  override get message(): string {
    return "nvidia-smi printed nothing"
  }
}

export class OutputTooLarge extends Schema.TaggedError<OutputTooLarge>()("OutputTooLarge", {
  maxBytes: Schema.Number,
  receivedBytes: Schema.Number,
}) {
  readonly kind = "output-too-large" as const
  override get message(): string {
    return `nvidia-smi output exceeds the limit of ${this.maxBytes} bytes`
  }
}

export class NotNvidiaSmiOutput extends Schema.TaggedError<NotNvidiaSmiOutput>()("NotNvidiaSmiOutput", {
  excerpt: Schema.String,
}) {
  readonly kind = "not-nvidia-smi" as const
  override get message(): string {
    return "the output is neither nvidia-smi XML (-q -x) nor --query-gpu CSV"
  }
}

export class TruncatedOutput extends Schema.TaggedError<TruncatedOutput>()("TruncatedOutput", {
  detail: Schema.String,
}) {
  readonly kind = "truncated" as const
  override get message(): string {
    return `the nvidia-smi document ends before it is complete (${this.detail})`
  }
}

export class MalformedOutput extends Schema.TaggedError<MalformedOutput>()("MalformedOutput", {
  detail: Schema.String,
}) {
  readonly kind = "malformed" as const
  override get message(): string {
    return `the nvidia-smi output is malformed: ${this.detail}`
  }
}

export class NoDevicesFound extends Schema.TaggedError<NoDevicesFound>()("NoDevicesFound", {}) {
  readonly kind = "no-devices" as const
  override get message(): string {
    return "nvidia-smi found no GPU on this node"
  }
}

export class DriverNotLoaded extends Schema.TaggedError<DriverNotLoaded>()("DriverNotLoaded", {
  excerpt: Schema.String,
}) {
  readonly kind = "driver-not-loaded" as const
  override get message(): string {
    return "nvidia-smi cannot communicate with the NVIDIA driver: the driver is not loaded"
  }
}

export class NvmlVersionMismatch extends Schema.TaggedError<NvmlVersionMismatch>()("NvmlVersionMismatch", {
  libraryVersion: Schema.optionalKey(Schema.String),
}) {
  readonly kind = "nvml-version-mismatch" as const
  override get message(): string {
    const library = this.libraryVersion === undefined ? "" : ` (NVML library ${this.libraryVersion})`
    return `the loaded NVIDIA driver does not match the NVML library${library}; the node needs a driver reload or a reboot`
  }
}

export class NvmlInitFailed extends Schema.TaggedError<NvmlInitFailed>()("NvmlInitFailed", {
  reason: Schema.String,
}) {
  readonly kind = "nvml-init-failed" as const
  override get message(): string {
    return `nvidia-smi could not initialise NVML: ${this.reason}`
  }
}

export class DeviceHandleFailure extends Schema.TaggedError<DeviceHandleFailure>()("DeviceHandleFailure", {
  failures: Schema.Array(GpuFailureSchema),
  survivingGpus: Schema.optionalKey(Schema.Number),
}) {
  readonly kind = "device-handle" as const
  override get message(): string {
    const listed = this.failures.slice(0, 3).map(describeFailedGpu).join(", ")
    const more = this.failures.length > 3 ? ` and ${this.failures.length - 3} more` : ""
    const surviving =
      this.survivingGpus === undefined
        ? "no other GPU is readable"
        : `the output still shows ${this.survivingGpus} GPU(s) but without UUIDs`
    return `nvidia-smi could not read ${listed}${more}; ${surviving}`
  }
}

const describeFailedGpu = (failure: GpuFailure): string => {
  const name = failure.index === undefined ? "GPU" : `GPU ${failure.index}`
  const bus = failure.pciBusId === undefined ? "" : ` (${failure.pciBusId})`
  return `${name}${bus}: ${failure.reason}`
}

export class GpuRequiresReset extends Schema.TaggedError<GpuRequiresReset>()("GpuRequiresReset", {
  gpuCount: Schema.Number,
}) {
  readonly kind = "gpu-requires-reset" as const
  override get message(): string {
    return `nvidia-smi reports that ${this.gpuCount} GPU(s) require a reset and none is readable`
  }
}

export class UnsupportedQueryField extends Schema.TaggedError<UnsupportedQueryField>()("UnsupportedQueryField", {
  field: Schema.String,
}) {
  readonly kind = "unsupported-query-field" as const
  override get message(): string {
    return `the NVIDIA driver does not know the --query-gpu field ${this.field}`
  }
}

export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  exitCode: Schema.Number,
  excerpt: Schema.String,
}) {
  readonly kind = "command-failed" as const
  override get message(): string {
    return `nvidia-smi exited with code ${this.exitCode}`
  }
}
