import * as Result from "effect/Result"
import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import { isDnsLabel, validateDnsSubdomain } from "../../config/DnsSubdomain.ts"
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

export const namespaceSetting: Setting<string> = {
  key: "namespace",
  env: "NAMESPACE",
  flag: "--namespace",
  type: stringType,
  default: "gpu-operator",
  secret: "none",
  label: "namespace",
  description: "Namespace of the NVIDIA device-plugin pods.",
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
  description: "Kubernetes label selector of the device-plugin pods.",
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
  description: "Container of the device-plugin pod that nvidia-smi runs in.",
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

export type NvidiaSmiMode = "auto" | "xml" | "csv"

/** The `kube_exec` receiver: which pods are read, how fast, and what is written back to nodes. */
export interface KubeExecConfig {
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
  }
  readonly nodeLabels: {
    readonly enabled: boolean
    /** DNS subdomain: labels are `<prefix>/gpu-<index>`. */
    readonly prefix: string
  }
}

/** The receiver's settings, in the order of the configuration reference. */
export const kubeExecSettings: ComponentSettings<KubeExecConfig> = {
  settings: [
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
    nodeLabelsEnabledSetting,
    nodeLabelPrefixSetting,
  ],
  build: (values) => ({
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
    },
    nodeLabels: {
      enabled: values.require(nodeLabelsEnabledSetting),
      prefix: values.require(nodeLabelPrefixSetting),
    },
  }),
}
