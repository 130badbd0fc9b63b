import * as Result from "effect/Result"
import type { ConfigProblem } from "../component/Component.ts"
import { type ObservationKind, observationKindOf } from "../pipeline/ObservationKind.ts"
import type { ComponentCatalog } from "./ComponentCatalog.ts"
import { type ComponentSettings, type ConfigurableComponent, sectionOf } from "./ComponentSettings.ts"
import { CONFIG_FILE_KEY, type DefinedExporter, PIPELINE, readConfigFile } from "./ConfigFile.ts"
import { ConfigInvalid } from "./ConfigInvalid.ts"
import {
  type Env,
  type FileMapping,
  type FlagValue,
  type GivenFlags,
  isFileMapping,
  resolveSettings,
  type SettingValues,
  valueAt,
} from "./ResolveSettings.ts"
import type { ComponentConfig, ExporterConfig, ServiceConfig } from "./ServiceConfig.ts"
import {
  clusterNameSetting,
  exportersSetting,
  fleetEventsSetting,
  fleetPageSetting,
  fleetTokenSetting,
  gpuInfoMetricSetting,
  leaderElectionSetting,
  leaderIdentitySetting,
  leaseDurationSetting,
  leaseNameSetting,
  leaseNamespaceSetting,
  leaseRenewDeadlineSetting,
  leaseRetryPeriodSetting,
  logLevelSetting,
  serverAddressSetting,
  serverPortSetting,
  serviceRules,
  serviceSettings,
  shutdownTimeoutSetting,
} from "./ServiceSettings.ts"
import type { AnySetting } from "./Setting.ts"
import { listType } from "./SettingType.ts"
import type { ConfigOrigins, ValueOrigin } from "./ValueOrigin.ts"

/** Everything configuration is made from; the caller reads the environment and the file. */
export interface ConfigSources {
  /** The flags after the subcommand (`run --workers 4`), as the command line gives them. */
  readonly flags: GivenFlags
  readonly env: Env
  /** The config file named by `--config` or `$GPU_SERIALS_CONFIG` (see `configFilePath`), when there is one. */
  readonly file?: { readonly path: string; readonly text: string }
  /**
   * A config object in the file's layout under the config file: what a program running the service sets
   * unless the user's file, environment or flags say otherwise (the demo's cluster and defaults).
   */
  readonly base?: FileMapping
  /** The component types of this build, with their settings; exporters of other types need a `module`. */
  readonly catalog: ComponentCatalog
}

/** The effective config, where each value came from, and the same config in the config file's layout. */
export interface ResolvedConfig {
  readonly config: ServiceConfig
  /** By dotted file path (`exporters.stdout/audit.queueSize`). */
  readonly origins: ConfigOrigins
  /** Every value in the form the config file writes it, secrets in clear; reading it back gives the same config. */
  readonly file: FileMapping
}

type Overrides = { readonly flags: ReadonlyMap<AnySetting, FlagValue>; readonly env: Env }

const noOverrides: Overrides = { flags: new Map(), env: {} }

/** One section resolved: its values, problems, origins by full path, and its file form. */
interface ResolvedSection {
  readonly values: SettingValues
  readonly problems: ReadonlyArray<ConfigProblem>
  readonly origins: Readonly<Record<string, ValueOrigin>>
  readonly section: FileMapping
}

const resolveSection = (
  spec: ComponentSettings<unknown>,
  path: string,
  mapping: FileMapping | undefined,
  overrides: Overrides,
): ResolvedSection => {
  const resolved = resolveSettings(spec.settings, spec.rules ?? [], {
    flags: overrides.flags,
    env: overrides.env,
    file: { mapping, path },
  })
  const origins: Record<string, ValueOrigin> = {}
  for (const setting of spec.settings) origins[`${path}.${setting.key}`] = resolved.values.origin(setting)
  return {
    values: resolved.values,
    problems: resolved.problems,
    origins,
    section: sectionOf(spec.settings, resolved.values),
  }
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

/**
 * The receivers or processors of the pipeline: the file's list, else every type of the build that passes
 * node observations (a cluster's pipeline; a hub's is named in the file).
 */
const pipelineComponents = (
  root: FileMapping,
  kind: "receivers" | "processors",
  known: ReadonlyArray<ConfigurableComponent>,
): ReadonlyArray<ConfigurableComponent> => {
  const listed = listType.fromFile(valueAt(root, `service.pipelines.${PIPELINE}.${kind}`) ?? [], true)
  const ids =
    Result.isSuccess(listed) && listed.success.length > 0
      ? listed.success
      : known.filter((component) => observationKindOf(component) === "node").map((component) => component.type)
  return ids.flatMap((id) => known.filter((component) => component.type === id))
}

/** The types of `list` that pass observations of `kind`, for a message that says what would fit. */
const typesPassing = (list: ReadonlyArray<ConfigurableComponent>, kind: ObservationKind): string =>
  list
    .filter((component) => observationKindOf(component) === kind)
    .map((component) => component.type)
    .join(", ")

/** A receiver and a processor that pass different observations cannot run in one pipeline. */
const pairingProblem = (
  receiver: Pending,
  processor: Pending,
  catalog: ComponentCatalog,
): ConfigProblem | undefined => {
  const made = observationKindOf(receiver)
  const taken = observationKindOf(processor)
  if (made === taken) return undefined
  return {
    key: `service.pipelines.${PIPELINE}.processors`,
    message: `processor ${JSON.stringify(processor.id)} takes ${taken} observations and receiver ${JSON.stringify(receiver.id)} makes ${made} observations; with receiver ${JSON.stringify(receiver.id)} use a processor of: ${typesPassing(catalog.processors, made)}`,
  }
}

interface Pending {
  readonly id: string
  readonly type: string
  readonly spec: ComponentSettings<unknown>
  readonly values: SettingValues
  readonly observes?: ObservationKind
}

const built = (pending: Pending): ComponentConfig => ({
  id: pending.id,
  type: pending.type,
  config: pending.spec.build(pending.values),
})

const fileSection = (root: FileMapping, path: string): FileMapping | undefined => {
  const section = valueAt(root, path)
  return isFileMapping(section) ? section : undefined
}

/**
 * Resolves the effective config: for each setting its flag, else its environment variable, else the
 * config file, else the default. Every problem is reported at once, each under the key the user wrote.
 * Each built-in component's section is resolved with that component's own settings (their environment
 * variables and flags applied to the components of the pipeline); third-party exporters' sections are
 * left to their factories, whose problems carry their file paths.
 */
export const resolveConfigWithOrigins = (sources: ConfigSources): Result.Result<ResolvedConfig, ConfigInvalid> =>
  resolvePipeline(sources).result

/** A third-party exporter of the pipeline, for its own factory to validate once its module is loaded. */
export interface ModuleExporter {
  readonly id: string
  readonly type: string
  readonly module: string
  readonly section: unknown
}

/**
 * The effective config, or every problem with it; and the pipeline's third-party exporters either way, so
 * that their factories' problems are reported together with the rest.
 */
export const resolvePipeline = (
  sources: ConfigSources,
): {
  readonly result: Result.Result<ResolvedConfig, ConfigInvalid>
  readonly modules: ReadonlyArray<ModuleExporter>
} => {
  const { catalog } = sources
  const { flags } = sources
  const file =
    sources.file === undefined && sources.base === undefined
      ? undefined
      : readConfigFile(sources.file?.text ?? "", catalog, sources.base, sources.file?.path)
  const root = file?.root ?? {}
  const problems: Array<ConfigProblem> = [...flags.problems, ...(file?.problems ?? [])]
  const overrides: Overrides = { flags: flags.values, env: sources.env }
  const service = resolveSettings(serviceSettings, serviceRules, {
    flags: flags.values,
    env: sources.env,
    file: { mapping: file?.root, path: "" },
  })
  problems.push(...service.problems)
  const origins: Record<string, ValueOrigin> = {}
  for (const setting of serviceSettings) origins[setting.key] = service.values.origin(setting)

  const effective: Record<string, unknown> = {
    cluster: {},
    receivers: {},
    processors: {},
    exporters: {},
    service: {},
  }
  Object.assign(
    effective,
    sectionOf(
      serviceSettings.filter((setting) => setting !== exportersSetting),
      service.values,
    ),
  )

  const components = (kind: "receivers" | "processors"): ReadonlyArray<Pending> => {
    const sections: Record<string, unknown> = {}
    effective[kind] = sections
    return pipelineComponents(root, kind, catalog[kind]).map((component) => {
      const path = `${kind}.${component.type}`
      const resolved = resolveSection(component.settings, path, fileSection(root, path), overrides)
      problems.push(...resolved.problems)
      Object.assign(origins, resolved.origins)
      sections[component.type] = resolved.section
      return {
        id: component.type,
        type: component.type,
        spec: component.settings,
        values: resolved.values,
        observes: observationKindOf(component),
      }
    })
  }
  const receivers = components("receivers")
  const processors = components("processors")
  // The service runs one receiver feeding one processor; a list naming one twice is refused here, not at start.
  for (const [kind, list] of [
    ["receiver", receivers],
    ["processor", processors],
  ] as const) {
    const key = `service.pipelines.${PIPELINE}.${kind}s`
    if (list.length !== 1 && !problems.some((problem) => problem.key === key)) {
      const named = list.length === 0 ? "" : ` (${list.map((component) => component.id).join(", ")})`
      problems.push({
        key,
        message: `pipeline ${JSON.stringify(PIPELINE)} needs exactly one ${kind}, got ${list.length}${named}`,
      })
    }
  }

  const [receiver] = receivers
  const [processor] = processors
  if (receivers.length === 1 && processors.length === 1 && receiver !== undefined && processor !== undefined) {
    const problem = pairingProblem(receiver, processor, catalog)
    if (problem !== undefined) problems.push(problem)
  }

  const knownExporterTypes = catalog.exporters.map((exporter) => exporter.type)
  const defined = file?.exporters ?? new Map<string, DefinedExporter>()
  const selected = selectExporters(service.values, defined, knownExporterTypes, problems)
  const selectedIds = new Set(selected.map((exporter) => exporter.id))
  const candidates = [...selected, ...[...defined.values()].filter((exporter) => !selectedIds.has(exporter.id))]
  const exporters: Array<Pending | ExporterConfig> = []
  const exporterSections: Record<string, unknown> = {}
  for (const exporter of candidates) {
    const inPipeline = selectedIds.has(exporter.id)
    const known = catalog.exporters.find((candidate) => candidate.type === exporter.type)
    if (exporter.module !== undefined || known === undefined) {
      if (inPipeline && exporter.module !== undefined) {
        exporters.push({ id: exporter.id, type: exporter.type, module: exporter.module, section: exporter.section })
        exporterSections[exporter.id] = { module: exporter.module, ...exporter.section }
      }
      continue
    }
    const path = `exporters.${exporter.id}`
    const resolved = resolveSection(
      known.settings,
      path,
      defined.has(exporter.id) ? exporter.section : undefined,
      // Environment variables and flags configure an exporter only when the pipeline uses it.
      inPipeline ? overrides : noOverrides,
    )
    problems.push(...resolved.problems)
    if (!inPipeline) continue
    Object.assign(origins, resolved.origins)
    exporterSections[exporter.id] = resolved.section
    exporters.push({ id: exporter.id, type: exporter.type, spec: known.settings, values: resolved.values })
  }
  effective.exporters = exporterSections
  const serviceSection = isFileMapping(effective.service) ? effective.service : {}
  effective.service = {
    ...serviceSection,
    pipelines: {
      [PIPELINE]: {
        receivers: receivers.map((receiver) => receiver.id),
        processors: processors.map((processor) => processor.id),
        exporters: exporters.map((exporter) => exporter.id),
      },
    },
  }

  const modules = exporters.filter((exporter): exporter is ModuleExporter => "module" in exporter)
  if (file !== undefined && !file.readable) {
    // Without the file's values, only what the flags and environment say can be judged.
    const judged = new Set([
      CONFIG_FILE_KEY,
      ...flags.problems.map((problem) => problem.key),
      ...Object.values(origins)
        .filter((origin) => origin.source === "flag" || origin.source === "env")
        .map((origin) => origin.key),
    ])
    return { result: Result.fail(ConfigInvalid.of(problems.filter((problem) => judged.has(problem.key)))), modules: [] }
  }
  if (problems.length > 0) return { result: Result.fail(ConfigInvalid.of(problems)), modules }
  const values = service.values
  const config: ServiceConfig = {
    clusterName: values.require(clusterNameSetting),
    receivers: receivers.map(built),
    processors: processors.map(built),
    exporters: exporters.map((exporter) => ("spec" in exporter ? built(exporter) : exporter)),
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
      gpuInfoMetric: values.require(gpuInfoMetricSetting),
    },
    fleet: {
      page: values.require(fleetPageSetting),
      token: values.require(fleetTokenSetting),
      events: values.require(fleetEventsSetting),
    },
    shutdownTimeoutMs: values.require(shutdownTimeoutSetting),
  }
  return { result: Result.succeed({ config, origins, file: effective }), modules }
}

/** The effective config, or every problem with it. */
export const resolveConfig = (sources: ConfigSources): Result.Result<ServiceConfig, ConfigInvalid> =>
  Result.map(resolveConfigWithOrigins(sources), (resolved) => resolved.config)
