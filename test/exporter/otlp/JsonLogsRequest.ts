import type { DecodedLogRecord, DecodedResourceLogs, DecodedValue } from "./ProtobufLogsRequest.ts"

/** The OTLP/JSON encoding of the same request, read into the shape the protobuf decoder gives. */

interface JsonAnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: string | number
  readonly doubleValue?: number
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
      readonly scope?: { readonly name?: string }
      readonly logRecords: ReadonlyArray<JsonLogRecord>
    }>
  }>
}

const value = (json: JsonAnyValue): DecodedValue => {
  if (json.stringValue !== undefined) return { string: json.stringValue }
  if (json.boolValue !== undefined) return { bool: json.boolValue }
  if (json.intValue !== undefined) return { int: BigInt(json.intValue) }
  if (json.doubleValue !== undefined) return { double: json.doubleValue }
  throw new Error(`unexpected AnyValue ${JSON.stringify(json)}`)
}

const keyValues = (entries: ReadonlyArray<JsonKeyValue> | undefined): ReadonlyMap<string, DecodedValue> =>
  new Map((entries ?? []).map((entry) => [entry.key, value(entry.value)]))

const logRecord = (json: JsonLogRecord): DecodedLogRecord => ({
  timeUnixNano: BigInt(json.timeUnixNano ?? 0),
  observedTimeUnixNano: BigInt(json.observedTimeUnixNano ?? 0),
  severityNumber: json.severityNumber ?? 0,
  severityText: json.severityText ?? "",
  body: json.body === undefined ? undefined : value(json.body),
  attributes: keyValues(json.attributes),
  eventName: json.eventName ?? "",
})

export const decodeJsonLogsRequest = (body: Uint8Array): ReadonlyArray<DecodedResourceLogs> => {
  const request = JSON.parse(new TextDecoder().decode(body)) as JsonLogsRequest
  return request.resourceLogs.map((resourceLogs) => ({
    resourceAttributes: keyValues(resourceLogs.resource?.attributes),
    scopeNames: resourceLogs.scopeLogs.map((scope) => scope.scope?.name ?? ""),
    logRecords: resourceLogs.scopeLogs.flatMap((scope) => scope.logRecords.map(logRecord)),
  }))
}
