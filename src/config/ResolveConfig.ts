import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { CONFIG_FILE_KEY, type DefinedExporter, readConfigFile } from "./ConfigFile.ts"
import { ConfigInvalid } from "./ConfigInvalid.ts"
import { hasExporterSettings, resolveExporterSection } from "./ExporterSection.ts"
import { parseFlags } from "./Flags.ts"
import { type Env, resolveSettings, type SettingValues } from "./ResolveSettings.ts"
import type { ExporterConfig, ServiceConfig } from "./ServiceConfig.ts"
import {
  burstSetting,
  clusterNameSetting,
  containerSetting,
  exportersSetting,
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
  serviceRules,
  serviceSettings,
  shutdownTimeoutSetting,
  timeoutSetting,
  workersSetting,
} from "./Settings.ts"
import type { ConfigOrigins, ValueOrigin } from "./ValueOrigin.ts"

/** Everything configuration is made from; the caller reads the environment and the file. */
export interface ConfigSources {
  /** The arguments after the subcommand (`run --workers 4` → `["--workers", "4"]`). */
  readonly argv: ReadonlyArray<string>
  readonly env: Env
  /** The config file named by `--config` or `$GPU_SERIALS_CONFIG` (see `configFilePath`), when there is one. */
  readonly file?: { readonly path: string; readonly text: string }
  /** Exporter types with a factory; other types need a `module`. */
  readonly knownExporterTypes: ReadonlyArray<string>
}

/** The effective config and where each value came from. */
export interface ResolvedConfig {
  readonly config: ServiceConfig
  readonly origins: ConfigOrigins
}

const exporterListProblem = (
  id: string,
  origin: ValueOrigin,
  knownExporterTypes: ReadonlyArray<string>,
  defined: ReadonlyMap<string, DefinedExporter>,
): ConfigProblem => {
  const definedIds = [...defined.keys()].filter((definedId) => !knownExporterTypes.includes(definedId))
  const definedText = definedIds.length === 0 ? "" : `; defined in the config file: ${definedIds.join(", ")}`
  return {
    key: origin.key,
    message: `invalid exporter type ${JSON.stringify(id)} (known types: ${knownExporterTypes.join(", ")}${definedText})`,
  }
}

/** The pipeline's exporters: ids defined in the file, else known types with default sections. */
const selectExporters = (
  values: SettingValues,
  defined: ReadonlyMap<string, DefinedExporter>,
  knownExporterTypes: ReadonlyArray<string>,
  problems: Array<ConfigProblem>,
): ReadonlyArray<DefinedExporter> => {
  const ids = values.get(exportersSetting)
  const origin = values.origin(exportersSetting)
  if (ids === undefined) return []
  // The file's own references are checked with the file's layout.
  const fromFile = origin.source === "file"
  if (ids.length === 0 && !fromFile) problems.push(exporterListProblem("", origin, knownExporterTypes, defined))
  const selected: Array<DefinedExporter> = []
  for (const id of new Set(ids)) {
    const definition = defined.get(id)
    if (definition !== undefined) selected.push(definition)
    else if (knownExporterTypes.includes(id)) selected.push({ id, type: id, section: {} })
    else if (!fromFile) problems.push(exporterListProblem(id, origin, knownExporterTypes, defined))
  }
  return selected
}

const toServiceConfig = (values: SettingValues, exporters: ReadonlyArray<ExporterConfig>): ServiceConfig => ({
  clusterName: values.require(clusterNameSetting),
  kubeExec: {
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
  },
  inventory: {
    reportIntervalMs: values.require(reportIntervalSetting),
    removalGraceMs: values.require(removalGraceSetting),
  },
  exporters,
  leaderElection: {
    enabled: values.require(leaderElectionSetting),
    leaseName: values.require(leaseNameSetting),
    leaseNamespace: values.require(leaseNamespaceSetting),
    leaseDurationMs: values.require(leaseDurationSetting),
    renewDeadlineMs: values.require(leaseRenewDeadlineSetting),
    retryPeriodMs: values.require(leaseRetryPeriodSetting),
    identity: values.require(leaderIdentitySetting),
  },
  telemetry: {
    logLevel: values.require(logLevelSetting),
    serverPort: values.require(serverPortSetting),
    serverAddress: values.require(serverAddressSetting),
  },
  shutdownTimeoutMs: values.require(shutdownTimeoutSetting),
})

/**
 * Resolves the effective config: for each setting its flag, else its environment variable, else the
 * config file, else the default. Every problem is reported at once, each under the key the user wrote.
 * The sections of the built-in exporters with settings (http, postgres, nats, otlp) are checked here
 * (their environment variables and flags applied when the exporter is in the pipeline); other exporters'
 * sections are left to their factories, whose problems the caller keys with `exporterProblemKey`.
 */
export const resolveConfigWithOrigins = (sources: ConfigSources): Result.Result<ResolvedConfig, ConfigInvalid> => {
  const flags = parseFlags(sources.argv)
  const file = sources.file === undefined ? undefined : readConfigFile(sources.file.text, sources.knownExporterTypes)
  const problems: Array<ConfigProblem> = [...flags.problems, ...(file?.problems ?? [])]
  const service = resolveSettings(serviceSettings, serviceRules, {
    flags: flags.values,
    env: sources.env,
    file: { mapping: file?.root, path: "" },
  })
  problems.push(...service.problems)
  const origins: Record<string, ValueOrigin> = {}
  for (const setting of serviceSettings) origins[setting.key] = service.values.origin(setting)

  const defined = file?.exporters ?? new Map<string, DefinedExporter>()
  const selected = selectExporters(service.values, defined, sources.knownExporterTypes, problems)
  const selectedIds = new Set(selected.map((exporter) => exporter.id))
  const candidates = [...selected, ...[...defined.values()].filter((exporter) => !selectedIds.has(exporter.id))]
  const exporters: Array<ExporterConfig> = []
  for (const exporter of candidates) {
    const inPipeline = selectedIds.has(exporter.id)
    const module = exporter.module
    let section: unknown = exporter.section
    if (module === undefined && hasExporterSettings(exporter.type)) {
      const resolved = resolveExporterSection(
        exporter.type,
        `exporters.${exporter.id}`,
        defined.has(exporter.id) ? exporter.section : undefined,
        // Environment variables and flags configure an exporter only when the pipeline uses it.
        inPipeline ? { flags: flags.values, env: sources.env } : { flags: new Map(), env: {} },
      )
      problems.push(...resolved.problems)
      section = resolved.section
      if (inPipeline) Object.assign(origins, resolved.origins)
    }
    if (inPipeline) {
      exporters.push(
        module === undefined
          ? { id: exporter.id, type: exporter.type, section }
          : { id: exporter.id, type: exporter.type, module, section },
      )
    }
  }

  if (file !== undefined && !file.readable) {
    // Without the file's values, only what the flags and environment say can be judged.
    const judged = new Set([
      CONFIG_FILE_KEY,
      ...flags.problems.map((problem) => problem.key),
      ...Object.values(origins)
        .filter((origin) => origin.source === "flag" || origin.source === "env")
        .map((origin) => origin.key),
    ])
    return Result.fail(ConfigInvalid.of(problems.filter((problem) => judged.has(problem.key))))
  }
  if (problems.length > 0) return Result.fail(ConfigInvalid.of(problems))
  return Result.succeed({ config: toServiceConfig(service.values, exporters), origins })
}

/** The effective config, or every problem with it. */
export const resolveConfig = (sources: ConfigSources): Result.Result<ServiceConfig, ConfigInvalid> =>
  Result.map(resolveConfigWithOrigins(sources), (resolved) => resolved.config)

/**
 * The key to report a problem an exporter's factory found at `relativeKey` of its section: the
 * environment variable or flag the value came from when known, else the dotted file path.
 */
export const exporterProblemKey = (origins: ConfigOrigins, exporterId: string, relativeKey: string): string => {
  const path = relativeKey === "" ? `exporters.${exporterId}` : `exporters.${exporterId}.${relativeKey}`
  return origins[path]?.key ?? path
}
