import type { DecodedLogRecord, DecodedResourceLogs, DecodedValue } from "./ProtobufLogsRequest.ts"

/** The OTLP/JSON encoding of the same request, read into the shape the protobuf decoder gives. */

interface JsonAnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly arrayValue?: { readonly values?: ReadonlyArray<JsonAnyValue> }
  readonly kvlistValue?: { readonly values?: ReadonlyArray<JsonKeyValue> }
}

interface JsonKeyValue {
  readonly key: string
  readonly value: JsonAnyValue
}

interface JsonLogRecord {
  readonly timeUnixNano?: string
  readonly observedTimeUnixNano?: string
  readonly severityNumber?: number
  readonly severityText?: string
  readonly body?: JsonAnyValue
  readonly attributes?: ReadonlyArray<JsonKeyValue>
  readonly eventName?: string
}

interface JsonLogsRequest {
  readonly resourceLogs: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<JsonKeyValue> }
    readonly scopeLogs: ReadonlyArray<{
      readonly scope?: { readonly name?: string; readonly attributes?: ReadonlyArray<JsonKeyValue> }
      readonly logRecords: ReadonlyArray<JsonLogRecord>
    }>
  }>
}

const value = (json: JsonAnyValue): DecodedValue => {
  if (json.stringValue !== undefined) return { string: json.stringValue }
  if (json.boolValue !== undefined) return { bool: json.boolValue }
  if (json.intValue !== undefined) return { int: BigInt(json.intValue) }
  if (json.doubleValue !== undefined) return { double: json.doubleValue }
  if (json.arrayValue !== undefined) return { array: (json.arrayValue.values ?? []).map(value) }
  if (json.kvlistValue !== undefined) return { kvlist: keyValues(json.kvlistValue.values) }
  throw new Error(`unexpected AnyValue ${JSON.stringify(json)}`)
}

function keyValues(entries: ReadonlyArray<JsonKeyValue> | undefined): ReadonlyMap<string, DecodedValue> {
  return new Map((entries ?? []).map((entry) => [entry.key, value(entry.value)]))
}

const logRecord = (json: JsonLogRecord): DecodedLogRecord => ({
  timeUnixNano: BigInt(json.timeUnixNano ?? 0),
  observedTimeUnixNano: BigInt(json.observedTimeUnixNano ?? 0),
  severityNumber: json.severityNumber ?? 0,
  severityText: json.severityText ?? "",
  // A record without a body (an entity event) is written with an empty AnyValue.
  body: json.body === undefined || Object.keys(json.body).length === 0 ? undefined : value(json.body),
  attributes: keyValues(json.attributes),
  eventName: json.eventName ?? "",
})

export const decodeJsonLogsRequest = (body: Uint8Array): ReadonlyArray<DecodedResourceLogs> => {
  const request = JSON.parse(new TextDecoder().decode(body)) as JsonLogsRequest
  return request.resourceLogs.map((resourceLogs) => ({
    resourceAttributes: keyValues(resourceLogs.resource?.attributes),
    scopeNames: resourceLogs.scopeLogs.map((scope) => scope.scope?.name ?? ""),
    scopes: resourceLogs.scopeLogs.map((scope) => ({
      name: scope.scope?.name ?? "",
      attributes: keyValues(scope.scope?.attributes),
      logRecords: scope.logRecords.map(logRecord),
    })),
    logRecords: resourceLogs.scopeLogs.flatMap((scope) => scope.logRecords.map(logRecord)),
  }))
}
