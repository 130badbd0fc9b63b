import * as Result from "effect/Result"
import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import { isDnsLabel, validateDnsSubdomain } from "../../config/DnsSubdomain.ts"
import type { SettingValues } from "../../config/ResolveSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { DAY, HOUR, notNegative, positive, required, SECOND } from "../../config/SettingRules.ts"
import {
  boolType,
  byteSizeType,
  durationType,
  enumType,
  floatType,
  intType,
  stringType,
} from "../../config/SettingType.ts"
import { parseLabelSelector } from "../../kubeclient/labels/LabelSelector.ts"

/**
 * The `kube_exec` receiver's settings (section `receivers.kube_exec`), with the Go original's environment
 * variables, defaults and messages.
 */

/**
 * Where the receiver finds GPUs: the NVIDIA device-plugin pods (`device-plugin`), the NVIDIA DRA driver's
 * kubelet-plugin pods and its ResourceSlices (`dra`), or whichever the cluster runs (`auto`, decided at start).
 */
export type Discovery = "device-plugin" | "dra" | "auto"

/** The mode a receiver reads in once `auto` is decided. */
export type DiscoveryMode = "device-plugin" | "dra"

/**
 * The pods read in `dra` mode unless set: the kubelet-plugin DaemonSet of the DRA driver's Helm chart
 * v25.12.0 (`deployments/helm/nvidia-dra-driver-gpu/templates/kubeletplugin.yaml`, rendered with its
 * defaults and installed as its docs say), its `gpus` container, and nvidia-smi from the driver root the
 * chart mounts at `/driver-root`, run with the NVML library preloaded as the plugin's prestart script does.
 */
export const draDefaults = {
  namespace: "nvidia-dra-driver-gpu",
  labelSelector: "nvidia-dra-driver-gpu-component=kubelet-plugin",
  container: "gpus",
  nvidiaSmiPath: "/driver-root/usr/bin/nvidia-smi",
  nvidiaMlLibrary: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
} as const

export const discoverySetting: Setting<Discovery> = {
  key: "discovery",
  env: "DISCOVERY",
  flag: "--discovery",
  type: enumType(["device-plugin", "dra", "auto"]),
  default: "device-plugin",
  secret: "none",
  label: "discovery",
  description:
    "Where GPUs are found: device-plugin pods, dra (the NVIDIA DRA driver's ResourceSlices and kubelet-plugin pods; changes the defaults of namespace, labelSelector, container, nvidiaSmiPath and nvidiaMlLibrary) or auto (dra when the API serves resource.k8s.io, slices of gpu.nvidia.com exist and no device-plugin pod matches).",
}

/** A value of `key` in `dra` mode when the user left it unset. */
const inDra =
  <K extends keyof typeof draDefaults>(key: K) =>
  (values: SettingValues): (typeof draDefaults)[K] | undefined =>
    values.get(discoverySetting) === "dra" ? draDefaults[key] : undefined

export const namespaceSetting: Setting<string> = {
  key: "namespace",
  env: "NAMESPACE",
  flag: "--namespace",
  type: stringType,
  default: "gpu-operator",
  secret: "none",
  label: "namespace",
  defaultFrom: inDra("namespace"),
  description: `Namespace of the NVIDIA device-plugin pods (DISCOVERY=dra: ${draDefaults.namespace}).`,
  check: (value) =>
    required("namespace must be specified")(value) ??
    (isDnsLabel(value)
      ? undefined
      : "namespace must be a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"),
  emptyEnvIsValue: true,
}

export const labelSelectorSetting: Setting<string> = {
  key: "labelSelector",
  env: "LABEL_SELECTOR",
  flag: "--label-selector",
  type: stringType,
  default: "app=nvidia-device-plugin-daemonset",
  secret: "none",
  label: "label selector",
  defaultFrom: inDra("labelSelector"),
  description: `Kubernetes label selector of the device-plugin pods (DISCOVERY=dra: ${draDefaults.labelSelector}).`,
  check: (value) => {
    if (value.trim() === "") return "label selector must be specified"
    const parsed = parseLabelSelector(value)
    return Result.isFailure(parsed) ? `invalid label selector ${JSON.stringify(value)}: ${parsed.failure}` : undefined
  },
  emptyEnvIsValue: true,
}

export const containerSetting: Setting<string> = {
  key: "container",
  env: "CONTAINER",
  flag: "--container",
  type: stringType,
  default: "nvidia-device-plugin",
  secret: "none",
  label: "container",
  defaultFrom: inDra("container"),
  description: `Container of the device-plugin pod that nvidia-smi runs in (DISCOVERY=dra: ${draDefaults.container}).`,
  check: required("container must be specified"),
  emptyEnvIsValue: true,
}

export const workersSetting: Setting<number> = {
  key: "workers",
  env: "WORKERS",
  flag: "--workers",
  type: intType,
  default: 16,
  secret: "none",
  label: "workers",
  // Each worker holds an exec and its output; QPS caps the pace long before a thousand of them.
  bounds: { min: 1, max: 1024 },
  description: "Pods read at the same time.",
  check: positive("workers must be > 0"),
}

export const timeoutSetting: Setting<number> = {
  key: "timeout",
  env: "TIMEOUT",
  flag: "--timeout",
  type: durationType,
  default: 30_000,
  secret: "none",
  label: "timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline per pod, covering exec, node lookup and hand-off to the exporters.",
  check: positive("timeout must be > 0"),
}

export const resyncSetting: Setting<number> = {
  key: "resync",
  env: "RESYNC",
  flag: "--resync",
  type: durationType,
  default: 0,
  secret: "none",
  label: "resync period",
  bounds: { min: SECOND, max: DAY, zeroDisables: true },
  description: "Informer resync period; 0 disables periodic resync.",
  check: notNegative("resync period must be >= 0 (0 disables periodic resync)"),
}

export const qpsSetting: Setting<number> = {
  key: "qps",
  env: "QPS",
  flag: "--qps",
  type: floatType,
  default: 50,
  secret: "none",
  label: "qps",
  bounds: { min: 0.01, max: 10_000 },
  description: "Kubernetes API requests per second, shared by every call.",
  check: positive("qps must be > 0"),
}

export const burstSetting: Setting<number> = {
  key: "burst",
  env: "BURST",
  flag: "--burst",
  type: intType,
  default: 100,
  secret: "none",
  label: "burst",
  bounds: { min: 1, max: 10_000 },
  description: "Kubernetes API request burst above the QPS rate.",
  check: positive("burst must be > 0"),
}

export const kubeconfigSetting: Setting<string> = {
  key: "kubeconfig",
  env: "KUBECONFIG",
  flag: "--kubeconfig",
  type: stringType,
  default: "",
  secret: "none",
  label: "kubeconfig",
  description: "Path of a kubeconfig file; empty means in-cluster, then the default kubeconfig.",
  emptyEnvIsValue: true,
}

export const nvidiaSmiModeSetting: Setting<"auto" | "xml" | "csv"> = {
  key: "nvidiaSmi.mode",
  env: "NVIDIA_SMI_MODE",
  flag: "--nvidia-smi-mode",
  type: enumType(["auto", "xml", "csv"]),
  default: "auto",
  secret: "none",
  label: "nvidia-smi mode",
  description: "How nvidia-smi is read: csv (cheap query), xml (-q -x) or auto (csv, xml where csv lacks fields).",
}

export const nvidiaSmiMaxOutputSetting: Setting<number> = {
  key: "nvidiaSmi.maxOutput",
  env: "NVIDIA_SMI_MAX_OUTPUT",
  flag: "--nvidia-smi-max-output",
  type: byteSizeType,
  default: 8 * 1024 * 1024,
  secret: "none",
  label: "nvidia-smi output cap",
  bounds: { min: 1024, max: 64 * 1024 * 1024 },
  description: "Most nvidia-smi output read from one exec (bytes, or 512Ki, 8Mi); more is an error.",
}

export const nodeLabelsEnabledSetting: Setting<boolean> = {
  key: "nodeLabels.enabled",
  env: "LABELS_ENABLED",
  flag: "--labels",
  type: boolType,
  default: true,
  secret: "none",
  label: "node labels",
  description: "Whether GPU serials are written as node labels (--no-labels turns it off).",
}

export const nodeLabelPrefixSetting: Setting<string> = {
  key: "nodeLabels.prefix",
  env: "LABEL_PREFIX",
  flag: "--label-prefix",
  type: stringType,
  default: "gpu-serials.dev",
  secret: "none",
  label: "label prefix",
  description: "Prefix of the node label keys (<prefix>/gpu-0); a DNS subdomain.",
  check: (value) => {
    const problem = validateDnsSubdomain(value)
    if (problem !== undefined) return `label prefix ${problem}`
    if (/(^|\.)(kubernetes\.io|k8s\.io)$/.test(value)) {
      return "label prefix must not be under kubernetes.io or k8s.io (reserved for Kubernetes)"
    }
    return undefined
  },
}

/** An absolute path, or a bare name looked up on the container's PATH; never a relative path or a command line. */
export const nvidiaSmiPathProblem = (value: string): string | undefined => {
  if (value === "") return "nvidia-smi path must be specified"
  if (/[\s\0]/.test(value)) return "nvidia-smi path must not contain whitespace or NUL"
  if (value.startsWith("/"))
    return value.endsWith("/") ? "nvidia-smi path must name a file, not a directory" : undefined
  if (value.includes("/") || value === "." || value === "..") {
    return `nvidia-smi path must be an absolute path or a bare name, got ${JSON.stringify(value)}`
  }
  return undefined
}

export const nvidiaSmiPathSetting: Setting<string> = {
  key: "nvidiaSmiPath",
  env: "NVIDIA_SMI_PATH",
  flag: "--nvidia-smi-path",
  type: stringType,
  default: "nvidia-smi",
  secret: "none",
  label: "nvidia-smi path",
  defaultFrom: inDra("nvidiaSmiPath"),
  description: `nvidia-smi in the container: an absolute path or a bare name on its PATH (DISCOVERY=dra: ${draDefaults.nvidiaSmiPath}).`,
  check: nvidiaSmiPathProblem,
  emptyEnvIsValue: true,
}

/** Empty, or an absolute path of a file. */
export const nvidiaMlLibraryProblem = (value: string): string | undefined => {
  if (value === "") return undefined
  if (/[\s\0]/.test(value)) return "NVML library must not contain whitespace or NUL"
  return value.startsWith("/") && !value.endsWith("/")
    ? undefined
    : `NVML library must be an absolute path of libnvidia-ml.so.1 or empty, got ${JSON.stringify(value)}`
}

export const nvidiaMlLibrarySetting: Setting<string> = {
  key: "nvidiaMlLibrary",
  env: "NVIDIA_ML_LIBRARY",
  flag: "--nvidia-ml-library",
  type: stringType,
  default: "",
  secret: "none",
  label: "NVML library",
  defaultFrom: inDra("nvidiaMlLibrary"),
  description: `Absolute path of libnvidia-ml.so.1 preloaded for nvidia-smi (env LD_PRELOAD=...); empty runs nvidia-smi as it is (DISCOVERY=dra: ${draDefaults.nvidiaMlLibrary}; RHEL-like hosts: /driver-root/usr/lib64/libnvidia-ml.so.1).`,
  check: nvidiaMlLibraryProblem,
}

export type NvidiaSmiMode = "auto" | "xml" | "csv"

/** The pods a mode reads and how nvidia-smi runs in them. */
export interface PodTarget {
  readonly namespace: string
  readonly labelSelector: string
  readonly container: string
  readonly nvidiaSmiPath: string
  /** Empty: nvidia-smi runs without a preloaded library. */
  readonly nvidiaMlLibrary: string
}

/** The `kube_exec` receiver: which pods are read, how fast, and what is written back to nodes. */
export interface KubeExecConfig {
  readonly discovery: Discovery
  /** The pods of the configured mode (`auto`: of the device-plugin mode until the receiver decides). */
  readonly namespace: string
  readonly labelSelector: string
  readonly container: string
  readonly workers: number
  /** Deadline per pod: exec, node lookup and hand-off to the exporters. */
  readonly timeoutMs: number
  /** 0: no periodic resync. */
  readonly resyncMs: number
  readonly qps: number
  readonly burst: number
  /** Empty: in-cluster config, then the default kubeconfig. */
  readonly kubeconfig: string
  readonly nvidiaSmi: {
    readonly mode: NvidiaSmiMode
    readonly maxOutputBytes: number
    readonly path: string
    /** Empty: no `LD_PRELOAD`. */
    readonly mlLibrary: string
  }
  /**
   * The pods each mode reads and how nvidia-smi runs there: the values set win in both, each mode's own
   * defaults fill the rest. `auto` picks one of them at start.
   */
  readonly targets: Readonly<Record<DiscoveryMode, PodTarget>>
  readonly nodeLabels: {
    readonly enabled: boolean
    /** DNS subdomain: labels are `<prefix>/gpu-<index>`. */
    readonly prefix: string
  }
}

/** The receiver's settings, in the order of the configuration reference. */
export const kubeExecSettings: ComponentSettings<KubeExecConfig> = {
  settings: [
    discoverySetting,
    namespaceSetting,
    labelSelectorSetting,
    containerSetting,
    workersSetting,
    timeoutSetting,
    resyncSetting,
    qpsSetting,
    burstSetting,
    kubeconfigSetting,
    nvidiaSmiModeSetting,
    nvidiaSmiMaxOutputSetting,
    nvidiaSmiPathSetting,
    nvidiaMlLibrarySetting,
    nodeLabelsEnabledSetting,
    nodeLabelPrefixSetting,
  ],
  build: (values) => ({
    discovery: values.require(discoverySetting),
    namespace: values.require(namespaceSetting),
    labelSelector: values.require(labelSelectorSetting),
    container: values.require(containerSetting),
    workers: values.require(workersSetting),
    timeoutMs: values.require(timeoutSetting),
    resyncMs: values.require(resyncSetting),
    qps: values.require(qpsSetting),
    burst: values.require(burstSetting),
    kubeconfig: values.require(kubeconfigSetting),
    nvidiaSmi: {
      mode: values.require(nvidiaSmiModeSetting),
      maxOutputBytes: values.require(nvidiaSmiMaxOutputSetting),
      path: values.require(nvidiaSmiPathSetting),
      mlLibrary: values.require(nvidiaMlLibrarySetting),
    },
    targets: { "device-plugin": targetOf(values, "device-plugin"), dra: targetOf(values, "dra") },
    nodeLabels: {
      enabled: values.require(nodeLabelsEnabledSetting),
      prefix: values.require(nodeLabelPrefixSetting),
    },
  }),
}

/**
 * The value a mode reads: the one set, else that mode's default. A value equal to the other mode's default
 * counts as unset, so the config `config print` writes (every value, defaults included) reads back as the
 * same config in `auto` mode.
 */
const valueIn = (values: SettingValues, setting: Setting<string>, mode: DiscoveryMode, draDefault: string): string => {
  const defaults: Record<DiscoveryMode, string> = {
    "device-plugin": setting.default ?? values.require(setting),
    dra: draDefault,
  }
  const value = values.require(setting)
  const other: DiscoveryMode = mode === "dra" ? "device-plugin" : "dra"
  return values.origin(setting).source === "default" || value === defaults[other] ? defaults[mode] : value
}

const targetOf = (values: SettingValues, mode: DiscoveryMode): PodTarget => ({
  namespace: valueIn(values, namespaceSetting, mode, draDefaults.namespace),
  labelSelector: valueIn(values, labelSelectorSetting, mode, draDefaults.labelSelector),
  container: valueIn(values, containerSetting, mode, draDefaults.container),
  nvidiaSmiPath: valueIn(values, nvidiaSmiPathSetting, mode, draDefaults.nvidiaSmiPath),
  nvidiaMlLibrary: valueIn(values, nvidiaMlLibrarySetting, mode, draDefaults.nvidiaMlLibrary),
})

/** The config of a receiver that reads in `mode` (what `auto` decided): that mode's pods and nvidia-smi. */
export const configForMode = (config: KubeExecConfig, mode: DiscoveryMode): KubeExecConfig => {
  const target = config.targets[mode]
  return {
    ...config,
    discovery: mode,
    namespace: target.namespace,
    labelSelector: target.labelSelector,
    container: target.container,
    nvidiaSmi: { ...config.nvidiaSmi, path: target.nvidiaSmiPath, mlLibrary: target.nvidiaMlLibrary },
  }
}
