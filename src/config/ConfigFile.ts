import * as Result from "effect/Result"
import { parseDocument } from "yaml"
import type { ConfigProblem } from "../component/Component.ts"
import type { ComponentCatalog } from "./ComponentCatalog.ts"
import { type FileMapping, isFileMapping, valueAt } from "./ResolveSettings.ts"
import { checkKeys } from "./SectionKeys.ts"
import { exportersSetting, serviceSettings } from "./ServiceSettings.ts"
import { listType } from "./SettingType.ts"

/**
 * The config file, laid out like an OpenTelemetry Collector's:
 *
 * ```yaml
 * cluster: { name: prod-east }                  # the cluster, written into every record
 * receivers: { kube_exec: { workers: 16 } }
 * processors: { inventory: { reportInterval: 1h } }
 * exporters:
 *   stdout: {}
 *   stdout/audit: { queueSize: 500 }          # <type>/<name> for a second exporter of a type
 *   kafka: { module: "@acme/gpu-serials-kafka" } # third-party: any type, loaded from `module`
 * service:
 *   telemetry: { logs: { level: info }, metrics: { port: 8080 } }
 *   leaderElection: { enabled: true }
 *   pipelines:
 *     gpus: { receivers: [kube_exec], processors: [inventory], exporters: [stdout, stdout/audit] }
 * ```
 *
 * The cluster name is a top-level section because records, exporters and the inventory all carry it,
 * not only the receiver. Unknown keys are errors in every section of the service and of the built-in
 * components; the sections of third-party exporters are passed on untouched, for their own factory.
 */

/** The key of problems with the file as a whole (syntax errors, unreadable file). */
export const CONFIG_FILE_KEY = "config file"

/** The one pipeline of the service. */
export const PIPELINE = "gpus"

/** An exporter component defined in the file. */
export interface DefinedExporter {
  /** `type` or `type/name`. */
  readonly id: string
  readonly type: string
  /** npm package or path of a third-party exporter. */
  readonly module?: string
  /** The section without `module`. */
  readonly section: FileMapping
}

export interface ConfigFile {
  /** False when the text is not YAML; `root` is then empty and only `problems` say anything. */
  readonly readable: boolean
  readonly root: FileMapping
  /** Exporters defined in the file, in file order, by id. */
  readonly exporters: ReadonlyMap<string, DefinedExporter>
  readonly problems: ReadonlyArray<ConfigProblem>
}

const EXPORTER_ID = /^([a-z][a-z0-9_]*)(?:\/([A-Za-z0-9_-]+))?$/

const parseYaml = (text: string): { readonly root: unknown; readonly problems: ReadonlyArray<ConfigProblem> } => {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true })
  if (document.errors.length > 0) {
    return {
      root: undefined,
      problems: document.errors.map((error) => {
        const position = error.linePos?.[0]
        const message = error.message.split(" at line ")[0] ?? error.message
        return {
          key: CONFIG_FILE_KEY,
          message: position === undefined ? message : `line ${position.line}, column ${position.col}: ${message}`,
        }
      }),
    }
  }
  try {
    return { root: document.toJS({ maxAliasCount: 100 }), problems: [] }
  } catch (error) {
    return { root: undefined, problems: [{ key: CONFIG_FILE_KEY, message: String(error) }] }
  }
}

const readExporters = (
  root: FileMapping,
  catalog: ComponentCatalog,
  problems: Array<ConfigProblem>,
): ReadonlyMap<string, DefinedExporter> => {
  const knownExporterTypes = catalog.exporters.map((exporter) => exporter.type)
  const exporters = new Map<string, DefinedExporter>()
  const node = root.exporters
  if (node === undefined || node === null) return exporters
  if (!isFileMapping(node)) {
    problems.push({ key: "exporters", message: "must be a mapping" })
    return exporters
  }
  for (const [id, value] of Object.entries(node)) {
    const path = `exporters.${id}`
    const match = EXPORTER_ID.exec(id)
    if (match === null || match[1] === undefined) {
      problems.push({
        key: path,
        message: "exporter id must be <type> or <type>/<name> (type: a-z, 0-9, '_'; name: letters, digits, '_', '-')",
      })
      continue
    }
    const type = match[1]
    if (value !== null && !isFileMapping(value)) {
      problems.push({ key: path, message: "must be a mapping" })
      continue
    }
    const { module, ...section } = value ?? {}
    if (module !== undefined && (typeof module !== "string" || module.trim() === "")) {
      problems.push({ key: `${path}.module`, message: "module must name an npm package or a path to one" })
      continue
    }
    if (module === undefined && !knownExporterTypes.includes(type)) {
      problems.push({
        key: path,
        message: `unknown exporter type ${JSON.stringify(type)} (known types: ${knownExporterTypes.join(", ")}; a third-party exporter names its package in "module")`,
      })
      continue
    }
    const settings =
      module === undefined ? (catalog.exporters.find((known) => known.type === type)?.settings.settings ?? []) : []
    if (module === undefined) {
      checkKeys(
        section,
        path,
        settings.map((setting) => setting.key),
        problems,
      )
    }
    exporters.set(id, module === undefined ? { id, type, section } : { id, type, module, section })
  }
  return exporters
}

/** Checks that a pipeline's list names components defined in `definedIn` and includes the `required` one. */
const checkPipelineList = (
  pipeline: FileMapping,
  field: "receivers" | "processors" | "exporters",
  defined: (id: string) => boolean,
  required: ReadonlyArray<string> | undefined,
  problems: Array<ConfigProblem>,
) => {
  const value = pipeline[field]
  if (value === undefined || value === null) return
  const key = `service.pipelines.${PIPELINE}.${field}`
  const list = listType.fromFile(value, true)
  if (Result.isFailure(list)) {
    // The exporters list is a setting and gets its message where settings are read.
    if (field !== "exporters") problems.push({ key, message: `${field} ${list.failure}` })
    return
  }
  const kind = field.slice(0, -1)
  for (const id of list.success) {
    if (!defined(id)) {
      problems.push({
        key,
        message: `${kind} ${JSON.stringify(id)} is used in pipeline ${JSON.stringify(PIPELINE)} but not defined`,
      })
    }
  }
  if (required !== undefined && required.length > 0 && !list.success.some((id) => required.includes(id))) {
    problems.push({ key, message: `pipeline ${JSON.stringify(PIPELINE)} needs the ${required.join(" or ")} ${kind}` })
  }
  if (list.success.length === 0 && field === "exporters") {
    problems.push({ key, message: `pipeline ${JSON.stringify(PIPELINE)} needs at least one exporter` })
  }
}

const checkPipelines = (
  root: FileMapping,
  exporters: ReadonlyMap<string, DefinedExporter>,
  catalog: ComponentCatalog,
  problems: Array<ConfigProblem>,
) => {
  const pipelines = valueAt(root, "service.pipelines")
  if (pipelines === undefined) return
  if (!isFileMapping(pipelines)) {
    problems.push({ key: "service.pipelines", message: "must be a mapping" })
    return
  }
  for (const [name, pipeline] of Object.entries(pipelines)) {
    const path = `service.pipelines.${name}`
    if (name !== PIPELINE) {
      problems.push({
        key: path,
        message: `unknown pipeline ${JSON.stringify(name)} (the service has one pipeline, ${JSON.stringify(PIPELINE)})`,
      })
      continue
    }
    if (pipeline === null) continue
    if (!isFileMapping(pipeline)) {
      problems.push({ key: path, message: "must be a mapping" })
      continue
    }
    checkKeys(pipeline, path, ["receivers", "processors", "exporters"], problems)
    const sectionHas = (section: string) => (id: string) => {
      const components = root[section]
      return isFileMapping(components) && Object.hasOwn(components, id)
    }
    const types = (components: ReadonlyArray<{ readonly type: string }>) => components.map((known) => known.type)
    checkPipelineList(pipeline, "receivers", sectionHas("receivers"), types(catalog.receivers), problems)
    checkPipelineList(pipeline, "processors", sectionHas("processors"), types(catalog.processors), problems)
    checkPipelineList(pipeline, "exporters", (id) => exporters.has(id), undefined, problems)
  }
}

/** `over` laid over `under`: mappings merge key by key, any other value of `over` replaces. */
const underlaid = (under: FileMapping, over: FileMapping): FileMapping => {
  const merged: Record<string, unknown> = { ...under }
  for (const [key, value] of Object.entries(over)) {
    const below = merged[key]
    merged[key] = isFileMapping(below) && isFileMapping(value) ? underlaid(below, value) : value
  }
  return merged
}

/**
 * Reads the config file, laid over `base` (a program's own config object, such as the demo's): YAML syntax (errors with line and column under the key `config file`), then
 * the layout: known sections and keys, exporter ids and types, and pipelines that name defined components.
 */
export const readConfigFile = (text: string, catalog: ComponentCatalog, base: FileMapping = {}): ConfigFile => {
  const parsed = parseYaml(text)
  const problems: Array<ConfigProblem> = [...parsed.problems]
  if (parsed.problems.length > 0) return { readable: false, root: {}, exporters: new Map(), problems }
  if (!isFileMapping(parsed.root) && parsed.root !== undefined && parsed.root !== null) {
    problems.push({
      key: CONFIG_FILE_KEY,
      message: "must be a mapping with cluster, receivers, processors, exporters and service",
    })
    return { readable: false, root: {}, exporters: new Map(), problems }
  }
  const root = underlaid(base, isFileMapping(parsed.root) ? parsed.root : {})
  const serviceLeaves = serviceSettings.map((setting) => setting.key).filter((key) => key !== exportersSetting.key)
  const componentLeaves = (kind: "receivers" | "processors") =>
    catalog[kind].flatMap((component) =>
      component.settings.settings.map((setting) => `${kind}.${component.type}.${setting.key}`),
    )
  checkKeys(
    root,
    "",
    [
      ...serviceLeaves,
      ...componentLeaves("receivers"),
      ...componentLeaves("processors"),
      "exporters",
      "service.pipelines",
    ],
    problems,
  )
  const exporters = readExporters(root, catalog, problems)
  checkPipelines(root, exporters, catalog, problems)
  return { readable: true, root, exporters, problems }
}
