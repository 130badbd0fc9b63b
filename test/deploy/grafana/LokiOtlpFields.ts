import type { DecodedResourceLogs, DecodedValue } from "../../exporter/otlp/ProtobufLogsRequest.ts"

/**
 * Loki's default `distributor.otlp_config.default_resource_attributes_as_index_labels`: the resource
 * attributes its OTLP endpoint stores as index (stream) labels; every other resource, scope and log
 * attribute becomes structured metadata of each line.
 */
export const lokiDefaultIndexAttributes: ReadonlyArray<string> = [
  "service.name",
  "service.namespace",
  "service.instance.id",
  "deployment.environment",
  "deployment.environment.name",
  "cloud.region",
  "cloud.availability_zone",
  "k8s.cluster.name",
  "k8s.namespace.name",
  "k8s.pod.name",
  "k8s.container.name",
  "container.name",
  "k8s.replicaset.name",
  "k8s.deployment.name",
  "k8s.statefulset.name",
  "k8s.daemonset.name",
  "k8s.cronjob.name",
  "k8s.job.name",
]

/** An attribute name as Loki spells it: every character outside `[A-Za-z0-9_]` becomes `_`. */
export const lokiName = (attribute: string): string => {
  const name = attribute.replace(/[^A-Za-z0-9_]/g, "_")
  return /^[0-9]/.test(name) ? `key_${name}` : name
}

const scalarOf = (value: DecodedValue): string | number | boolean => {
  if ("string" in value) return value.string
  if ("int" in value) return Number(value.int)
  if ("bool" in value) return value.bool
  if ("double" in value) return value.double
  throw new Error("a GPU log record's arrays hold scalars; maps come only in entity events")
}

/** A value as Loki stores it: scalars as text, an array (the health reasons) as its JSON, as the Collector's `AsString` writes it. */
const asString = (value: DecodedValue): string => {
  if ("array" in value) return JSON.stringify(value.array.map(scalarOf))
  return String(scalarOf(value))
}

/** Names and the values seen under them. */
export type LokiValues = ReadonlyMap<string, ReadonlySet<string>>

/** What Loki stores of an OTLP logs request: index labels, structured metadata and log lines. */
export interface LokiFields {
  readonly indexLabels: LokiValues
  readonly structuredMetadata: LokiValues
  readonly lines: ReadonlyArray<string>
}

/**
 * Loki's OTLP mapping of the decoded request: resource attributes in the default index list become
 * index labels, the other resource attributes, the scope name and the log attributes structured
 * metadata, with the record fields Loki adds (`severity_text`, `severity_number`, `observed_timestamp`);
 * the body becomes the line. The `EventName` field is not stored.
 */
export const lokiFieldsOf = (request: ReadonlyArray<DecodedResourceLogs>): LokiFields => {
  const indexLabels = new Map<string, Set<string>>()
  const structuredMetadata = new Map<string, Set<string>>()
  const lines: Array<string> = []
  const add = (into: Map<string, Set<string>>, name: string, value: string) => {
    const values = into.get(name) ?? new Set<string>()
    values.add(value)
    into.set(name, values)
  }
  for (const resourceLogs of request) {
    for (const [key, value] of resourceLogs.resourceAttributes) {
      add(lokiDefaultIndexAttributes.includes(key) ? indexLabels : structuredMetadata, lokiName(key), asString(value))
    }
    for (const scope of resourceLogs.scopeNames) if (scope !== "") add(structuredMetadata, "scope_name", scope)
    for (const record of resourceLogs.logRecords) {
      for (const [key, value] of record.attributes) add(structuredMetadata, lokiName(key), asString(value))
      if (record.severityText !== "") add(structuredMetadata, "severity_text", record.severityText)
      if (record.severityNumber !== 0) add(structuredMetadata, "severity_number", String(record.severityNumber))
      if (record.timeUnixNano !== 0n && record.observedTimeUnixNano !== 0n) {
        add(structuredMetadata, "observed_timestamp", record.observedTimeUnixNano.toString())
      }
      if (record.body !== undefined) lines.push(asString(record.body))
    }
  }
  return { indexLabels, structuredMetadata, lines }
}
