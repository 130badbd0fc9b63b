import * as Result from "effect/Result"
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from "yaml"
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

/** The tag prefix of the YAML core schema's types (`!!str`, `!!int`, `!!map`, …), the only tags the file may use. */
const coreTagPrefix = "tag:yaml.org,2002:"

/** The most aliases the file may expand; more is an attack on the memory of whoever reads it. */
const maxAliasCount = 100

/**
 * What a YAML problem means, in the product's words: the parser's own for the usual mistakes (they read
 * well: "Map keys must be unique"), a sentence of ours where its words name its API or its internals.
 */
const yamlSentence = (code: string, message: string): string => {
  switch (code) {
    case "MULTIPLE_DOCS":
      return "the file holds more than one YAML document (a line '---' starts another); the config file is one document"
    case "RESOURCE_EXHAUSTION":
      return "the file nests deeper than the config file may (lists or mappings inside each other)"
    default:
      return message.split(" at line ")[0] ?? message
  }
}

/** Where a problem is, as the user finds it: the file and, when known, the line and column. */
const placeOf = (path: string | undefined, position: { readonly line: number; readonly col: number } | undefined) =>
  [path, position === undefined ? undefined : `line ${position.line}, column ${position.col}`]
    .filter((part) => part !== undefined)
    .join(", ")

const problemAt = (place: string, sentence: string): ConfigProblem => ({
  key: CONFIG_FILE_KEY,
  message: place === "" ? sentence : `${place}: ${sentence}`,
})

/** A value given a tag of its own (`!js/function`): the file takes plain values, lists and mappings. */
const tagProblems = (document: Document, lines: LineCounter, path: string | undefined): Array<ConfigProblem> => {
  const problems: Array<ConfigProblem> = []
  visit(document, (_key, node, ancestors) => {
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return
    const tag = node.tag
    if (tag === undefined || tag.startsWith(coreTagPrefix)) return
    const keys = ancestors.filter(isPair).map((pair) => String(isScalar(pair.key) ? pair.key.value : pair.key))
    const position = node.range === undefined || node.range === null ? undefined : lines.linePos(node.range[0])
    const where = placeOf(path, position)
    problems.push({
      key: keys.length === 0 ? CONFIG_FILE_KEY : keys.join("."),
      message: `${where === "" ? "" : `${where}: `}YAML tag ${tag} is not one the config file reads (it takes plain values, lists and mappings)`,
    })
  })
  return problems
}

/**
 * The file's YAML as plain data, or why it cannot be read (`problems`); `tagged` are values it gave a tag
 * of their own, which the rest of the file is still checked beside.
 */
const parseYaml = (
  text: string,
  path: string | undefined,
): {
  readonly root: unknown
  readonly problems: ReadonlyArray<ConfigProblem>
  readonly tagged: ReadonlyArray<ConfigProblem>
} => {
  const lines = new LineCounter()
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines })
  if (document.errors.length > 0) {
    // A document nested too deeply fails once per level: its first error says it.
    const errors = document.errors.filter(
      (error, at, all) =>
        error.code !== "RESOURCE_EXHAUSTION" || all.findIndex((other) => other.code === "RESOURCE_EXHAUSTION") === at,
    )
    return {
      root: undefined,
      problems: errors.map((error) =>
        problemAt(placeOf(path, error.linePos?.[0]), yamlSentence(error.code, error.message)),
      ),
      tagged: [],
    }
  }
  const tagged = tagProblems(document, lines, path)
  try {
    return { root: document.toJS({ maxAliasCount }), problems: [], tagged }
  } catch (error) {
    const aliases = error instanceof ReferenceError && /alias/i.test(error.message)
    return {
      root: undefined,
      problems: [
        problemAt(
          placeOf(path, undefined),
          aliases
            ? `the file expands more than ${maxAliasCount} aliases (*name); write the values out`
            : "the file could not be read as YAML",
        ),
      ],
      tagged: [],
    }
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
export const readConfigFile = (
  text: string,
  catalog: ComponentCatalog,
  base: FileMapping = {},
  path?: string,
): ConfigFile => {
  const parsed = parseYaml(text, path)
  const problems: Array<ConfigProblem> = [...parsed.problems, ...parsed.tagged]
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
