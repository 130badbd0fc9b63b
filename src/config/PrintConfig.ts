import { Document, isCollection, isNode } from "yaml"
import { PIPELINE, PROCESSOR, RECEIVER } from "./ConfigFile.ts"
import { redactConfigFile } from "./Redact.ts"
import type { FileMapping } from "./ResolveSettings.ts"
import type { ServiceConfig } from "./ServiceConfig.ts"
import type { Setting } from "./Setting.ts"
import {
  burstSetting,
  clusterNameSetting,
  containerSetting,
  kubeconfigSetting,
  labelSelectorSetting,
  leaderElectionSetting,
  leaderIdentitySetting,
  leaseDurationSetting,
  leaseNameSetting,
  leaseNamespaceSetting,
  leaseRenewDeadlineSetting,
  leaseRetryPeriodSetting,
  logLevelSetting,
  namespaceSetting,
  nodeLabelPrefixSetting,
  nodeLabelsEnabledSetting,
  nvidiaSmiMaxOutputSetting,
  nvidiaSmiModeSetting,
  qpsSetting,
  removalGraceSetting,
  reportIntervalSetting,
  resyncSetting,
  serverAddressSetting,
  serverPortSetting,
  shutdownTimeoutSetting,
  timeoutSetting,
  workersSetting,
} from "./Settings.ts"
import type { FileValue } from "./SettingType.ts"
import type { ConfigOrigins } from "./ValueOrigin.ts"

type MutableMapping = Record<string, unknown>

const put = <T>(root: MutableMapping, setting: Setting<T>, value: T): void => {
  const parts = setting.key.split(".")
  let node = root
  for (const part of parts.slice(0, -1)) {
    const child = node[part]
    if (child === undefined || child === null || typeof child !== "object" || Array.isArray(child)) {
      const created: MutableMapping = {}
      node[part] = created
      node = created
    } else {
      node = child as MutableMapping
    }
  }
  const formatted: FileValue = setting.type.format(value)
  node[parts[parts.length - 1] ?? setting.key] = formatted
}

/** The effective config in the config-file layout, secrets in clear; reading it back gives the same config. */
export const configToFile = (config: ServiceConfig): FileMapping => {
  const exporters: MutableMapping = {}
  for (const exporter of config.exporters) {
    const section = exporter.section ?? {}
    exporters[exporter.id] =
      exporter.module === undefined ? section : { module: exporter.module, ...(section as FileMapping) }
  }
  const pipeline = {
    receivers: [RECEIVER],
    processors: [PROCESSOR],
    exporters: config.exporters.map((exporter) => exporter.id),
  }
  const root: MutableMapping = {
    cluster: {},
    receivers: { [RECEIVER]: {} },
    processors: { [PROCESSOR]: {} },
    exporters,
    service: { leaderElection: {}, telemetry: {}, pipelines: { [PIPELINE]: pipeline } },
  }
  put(root, clusterNameSetting, config.clusterName)
  const kube = config.kubeExec
  put(root, namespaceSetting, kube.namespace)
  put(root, labelSelectorSetting, kube.labelSelector)
  put(root, containerSetting, kube.container)
  put(root, workersSetting, kube.workers)
  put(root, timeoutSetting, kube.timeoutMs)
  put(root, resyncSetting, kube.resyncMs)
  put(root, qpsSetting, kube.qps)
  put(root, burstSetting, kube.burst)
  put(root, kubeconfigSetting, kube.kubeconfig)
  put(root, nvidiaSmiModeSetting, kube.nvidiaSmi.mode)
  put(root, nvidiaSmiMaxOutputSetting, kube.nvidiaSmi.maxOutputBytes)
  put(root, nodeLabelsEnabledSetting, kube.nodeLabels.enabled)
  put(root, nodeLabelPrefixSetting, kube.nodeLabels.prefix)
  put(root, reportIntervalSetting, config.inventory.reportIntervalMs)
  put(root, removalGraceSetting, config.inventory.removalGraceMs)
  const leader = config.leaderElection
  put(root, leaderElectionSetting, leader.enabled)
  put(root, leaseNameSetting, leader.leaseName)
  put(root, leaseNamespaceSetting, leader.leaseNamespace)
  put(root, leaseDurationSetting, leader.leaseDurationMs)
  put(root, leaseRenewDeadlineSetting, leader.renewDeadlineMs)
  put(root, leaseRetryPeriodSetting, leader.retryPeriodMs)
  put(root, leaderIdentitySetting, leader.identity)
  put(root, logLevelSetting, config.telemetry.logLevel)
  put(root, serverPortSetting, config.telemetry.serverPort)
  put(root, serverAddressSetting, config.telemetry.serverAddress)
  put(root, shutdownTimeoutSetting, config.shutdownTimeoutMs)
  return root
}

export interface PrintOptions {
  /** Replace secrets with `<redacted>` (default true). */
  readonly redact?: boolean
  /** When given, each value is followed by a comment saying where it came from (`# env WORKERS`). */
  readonly origins?: ConfigOrigins
}

const originComment = (source: string, key: string): string =>
  source === "flag" || source === "env" ? ` ${source} ${key}` : ` ${source}`

/**
 * The effective config as YAML in the config-file layout, so it can be saved and used as a config file;
 * secrets are redacted unless asked otherwise.
 */
export const printConfig = (config: ServiceConfig, options: PrintOptions = {}): string => {
  const file = configToFile(config)
  const document = new Document(options.redact === false ? file : redactConfigFile(file))
  for (const field of ["receivers", "processors", "exporters"]) {
    const list = document.getIn(["service", "pipelines", PIPELINE, field], true)
    if (isCollection(list)) list.flow = true
  }
  if (options.origins !== undefined) {
    for (const [path, origin] of Object.entries(options.origins)) {
      const node = document.getIn(path.split("."), true)
      if (!isNode(node)) continue
      const comment = originComment(origin.source, origin.key)
      // A block collection cannot carry a trailing comment on its key's line; a flow one can.
      if (isCollection(node)) node.flow = true
      node.comment = comment
    }
  }
  return document.toString({ flowCollectionPadding: false })
}
