import { Result } from "effect"
import { parseDocument } from "yaml"
import type { ConfigProblem } from "../component/Component.ts"
import { didYouMean } from "./ClosestName.ts"
import { type FileMapping, isFileMapping, valueAt } from "./ResolveSettings.ts"
import { exporterSettings, exportersSetting, serviceSettings } from "./Settings.ts"
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
 *   nats/archive: { url: nats://nats:4222 }    # <type>/<name> for a second exporter of a type
 *   kafka: { module: "@acme/gpu-serials-kafka" } # third-party: any type, loaded from `module`
 * service:
 *   telemetry: { logs: { level: info }, metrics: { port: 8080 } }
 *   leaderElection: { enabled: true }
 *   pipelines:
 *     gpus: { receivers: [kube_exec], processors: [inventory], exporters: [stdout, nats/archive] }
 * ```
 *
 * The cluster name is a top-level section because records, exporters and the inventory all carry it,
 * not only the receiver. Unknown keys are errors wherever the section is ours; the sections of exporters
 * that validate themselves (stdout, third-party) are passed on untouched.
 */

/** The key of problems with the file as a whole (syntax errors, unreadable file). */
export const CONFIG_FILE_KEY = "config file"

/** The one pipeline of the service. */
export const PIPELINE = "gpus"
export const RECEIVER = "kube_exec"
export const PROCESSOR = "inventory"

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

const joinPath = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

const unknownKeyMessage = (path: string, key: string, known: ReadonlyArray<string>): string => {
  if (path === "receivers") return `unknown receiver type ${JSON.stringify(key)} (known: ${known.join(", ")})`
  if (path === "processors") return `unknown processor type ${JSON.stringify(key)} (known: ${known.join(", ")})`
  return `unknown key${didYouMean(key, known)}`
}

/** Reports keys of `mapping` that lead to none of the dotted `leaves`, and non-mappings where a section belongs. */
export const checkKeys = (
  mapping: FileMapping,
  path: string,
  leaves: ReadonlyArray<string>,
  problems: Array<ConfigProblem>,
) => {
  const known = [...new Set(leaves.map((leaf) => leaf.split(".")[0] ?? leaf))]
  for (const [key, value] of Object.entries(mapping)) {
    const fullKey = joinPath(path, key)
    if (leaves.includes(key)) continue
    const below = leaves.filter((leaf) => leaf.startsWith(`${key}.`)).map((leaf) => leaf.slice(key.length + 1))
    if (below.length === 0) {
      problems.push({ key: fullKey, message: unknownKeyMessage(path, key, known) })
    } else if (isFileMapping(value)) {
      checkKeys(value, fullKey, below, problems)
    } else if (value !== null) {
      problems.push({ key: fullKey, message: "must be a mapping" })
    }
  }
}

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
  knownExporterTypes: ReadonlyArray<string>,
  problems: Array<ConfigProblem>,
): ReadonlyMap<string, DefinedExporter> => {
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
    const settings = module === undefined ? exporterSettings(type) : []
    if (settings.length > 0) {
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
  required: string | undefined,
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
  if (required !== undefined && !list.success.includes(required)) {
    problems.push({ key, message: `pipeline ${JSON.stringify(PIPELINE)} needs the ${required} ${kind}` })
  }
  if (list.success.length === 0 && field === "exporters") {
    problems.push({ key, message: `pipeline ${JSON.stringify(PIPELINE)} needs at least one exporter` })
  }
}

const checkPipelines = (
  root: FileMapping,
  exporters: ReadonlyMap<string, DefinedExporter>,
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
    checkPipelineList(pipeline, "receivers", sectionHas("receivers"), RECEIVER, problems)
    checkPipelineList(pipeline, "processors", sectionHas("processors"), PROCESSOR, problems)
    checkPipelineList(pipeline, "exporters", (id) => exporters.has(id), undefined, problems)
  }
}

/**
 * Reads the config file: YAML syntax (errors with line and column under the key `config file`), then
 * the layout: known sections and keys, exporter ids and types, and pipelines that name defined components.
 */
export const readConfigFile = (text: string, knownExporterTypes: ReadonlyArray<string>): ConfigFile => {
  const parsed = parseYaml(text)
  const problems: Array<ConfigProblem> = [...parsed.problems]
  if (parsed.problems.length > 0) return { readable: false, root: {}, exporters: new Map(), problems }
  if (parsed.root === undefined || parsed.root === null) {
    return { readable: true, root: {}, exporters: new Map(), problems }
  }
  if (!isFileMapping(parsed.root)) {
    problems.push({
      key: CONFIG_FILE_KEY,
      message: "must be a mapping with cluster, receivers, processors, exporters and service",
    })
    return { readable: false, root: {}, exporters: new Map(), problems }
  }
  const root = parsed.root
  const serviceLeaves = serviceSettings.map((setting) => setting.key).filter((key) => key !== exportersSetting.key)
  checkKeys(root, "", [...serviceLeaves, "exporters", "service.pipelines"], problems)
  const exporters = readExporters(root, knownExporterTypes, problems)
  checkPipelines(root, exporters, problems)
  return { readable: true, root, exporters, problems }
}
