/**
 * A decoder of OTLP `ExportLogsServiceRequest` protobuf bytes written from the field numbers of
 * opentelemetry-proto (collector/logs/v1, logs/v1, common/v1, resource/v1), independent of the
 * encoder under test. It reads only what the tests look at.
 */

export type DecodedValue =
  | { readonly string: string }
  | { readonly bool: boolean }
  | { readonly int: bigint }
  | {
      readonly double: number
    }
  | { readonly array: ReadonlyArray<DecodedValue> }
  | { readonly kvlist: ReadonlyMap<string, DecodedValue> }

export interface DecodedLogRecord {
  readonly timeUnixNano: bigint
  readonly observedTimeUnixNano: bigint
  readonly severityNumber: number
  readonly severityText: string
  readonly body: DecodedValue | undefined
  readonly attributes: ReadonlyMap<string, DecodedValue>
  readonly eventName: string
}

export interface DecodedScopeLogs {
  readonly name: string
  readonly attributes: ReadonlyMap<string, DecodedValue>
  readonly logRecords: ReadonlyArray<DecodedLogRecord>
}

export interface DecodedResourceLogs {
  readonly resourceAttributes: ReadonlyMap<string, DecodedValue>
  readonly scopeNames: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<DecodedScopeLogs>
  readonly logRecords: ReadonlyArray<DecodedLogRecord>
}

interface Field {
  readonly number: number
  readonly varint?: bigint
  readonly fixed64?: bigint
  readonly bytes?: Uint8Array
}

const readVarint = (bytes: Uint8Array, start: number): readonly [bigint, number] => {
  let value = 0n
  let shift = 0n
  let offset = start
  for (;;) {
    const byte = bytes[offset]
    if (byte === undefined) throw new Error("truncated varint")
    offset += 1
    value |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return [value, offset]
    shift += 7n
  }
}

const fieldsOf = (bytes: Uint8Array): ReadonlyArray<Field> => {
  const fields: Array<Field> = []
  let offset = 0
  while (offset < bytes.length) {
    const [tag, afterTag] = readVarint(bytes, offset)
    const number = Number(tag >> 3n)
    const wireType = Number(tag & 7n)
    offset = afterTag
    if (wireType === 0) {
      const [varint, next] = readVarint(bytes, offset)
      fields.push({ number, varint })
      offset = next
    } else if (wireType === 1) {
      const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 8)
      fields.push({ number, fixed64: view.getBigUint64(0, true) })
      offset += 8
    } else if (wireType === 2) {
      const [length, next] = readVarint(bytes, offset)
      const end = next + Number(length)
      if (end > bytes.length) throw new Error("truncated length-delimited field")
      fields.push({ number, bytes: bytes.subarray(next, end) })
      offset = end
    } else if (wireType === 5) {
      offset += 4
    } else {
      throw new Error(`unsupported wire type ${wireType}`)
    }
  }
  return fields
}

const text = (bytes: Uint8Array | undefined): string => (bytes === undefined ? "" : new TextDecoder().decode(bytes))

const messages = (fields: ReadonlyArray<Field>, number: number): ReadonlyArray<Uint8Array> =>
  fields.flatMap((field) => (field.number === number && field.bytes !== undefined ? [field.bytes] : []))

const first = (fields: ReadonlyArray<Field>, number: number): Field | undefined =>
  fields.find((field) => field.number === number)

/**
 * AnyValue: string_value = 1, bool_value = 2, int_value = 3, double_value = 4, array_value = 5
 * (ArrayValue: values = 1), kvlist_value = 6 (KeyValueList: values = 1).
 */
const anyValue = (bytes: Uint8Array): DecodedValue | undefined => {
  const [field] = fieldsOf(bytes)
  if (field === undefined) return undefined
  switch (field.number) {
    case 1:
      return { string: text(field.bytes) }
    case 2:
      return { bool: field.varint === 1n }
    case 3:
      return { int: BigInt.asIntN(64, field.varint ?? 0n) }
    case 4: {
      const view = new DataView(new ArrayBuffer(8))
      view.setBigUint64(0, field.fixed64 ?? 0n, true)
      return { double: view.getFloat64(0, true) }
    }
    case 5:
      return {
        array: messages(fieldsOf(field.bytes ?? new Uint8Array()), 1).flatMap((value) => {
          const decoded = anyValue(value)
          return decoded === undefined ? [] : [decoded]
        }),
      }
    case 6:
      return { kvlist: keyValues(messages(fieldsOf(field.bytes ?? new Uint8Array()), 1)) }
    default:
      throw new Error(`unexpected AnyValue field ${field.number}`)
  }
}

/** KeyValue: key = 1, value = 2. */
const keyValues = (entries: ReadonlyArray<Uint8Array>): ReadonlyMap<string, DecodedValue> => {
  const map = new Map<string, DecodedValue>()
  for (const entry of entries) {
    const fields = fieldsOf(entry)
    const key = text(first(fields, 1)?.bytes)
    if (map.has(key)) throw new Error(`duplicate attribute ${key}`)
    const value = first(fields, 2)?.bytes
    const decoded = value === undefined ? undefined : anyValue(value)
    if (decoded !== undefined) map.set(key, decoded)
  }
  return map
}

/** LogRecord: time_unix_nano = 1, severity_number = 2, severity_text = 3, body = 5, attributes = 6,
 * observed_time_unix_nano = 11, event_name = 12. */
const logRecord = (bytes: Uint8Array): DecodedLogRecord => {
  const fields = fieldsOf(bytes)
  const body = first(fields, 5)?.bytes
  return {
    timeUnixNano: first(fields, 1)?.fixed64 ?? 0n,
    observedTimeUnixNano: first(fields, 11)?.fixed64 ?? 0n,
    severityNumber: Number(first(fields, 2)?.varint ?? 0n),
    severityText: text(first(fields, 3)?.bytes),
    body: body === undefined ? undefined : anyValue(body),
    attributes: keyValues(messages(fields, 6)),
    eventName: text(first(fields, 12)?.bytes),
  }
}

/** ExportLogsServiceRequest.resource_logs = 1; ResourceLogs: resource = 1 (attributes = 1), scope_logs = 2;
 * ScopeLogs: scope = 1 (name = 1, attributes = 3), log_records = 2. */
export const decodeLogsRequest = (bytes: Uint8Array): ReadonlyArray<DecodedResourceLogs> =>
  messages(fieldsOf(bytes), 1).map((resourceLogs) => {
    const fields = fieldsOf(resourceLogs)
    const resource = messages(fields, 1)[0]
    const scopeLogs = messages(fields, 2).map(fieldsOf)
    return {
      resourceAttributes: keyValues(resource === undefined ? [] : messages(fieldsOf(resource), 1)),
      scopeNames: scopeLogs.map((scope) => {
        const scopeMessage = messages(scope, 1)[0]
        return scopeMessage === undefined ? "" : text(first(fieldsOf(scopeMessage), 1)?.bytes)
      }),
      scopes: scopeLogs.map((scope) => {
        const scopeMessage = messages(scope, 1)[0]
        const scopeFields = scopeMessage === undefined ? [] : fieldsOf(scopeMessage)
        return {
          name: text(first(scopeFields, 1)?.bytes),
          attributes: keyValues(messages(scopeFields, 3)),
          logRecords: messages(scope, 2).map(logRecord),
        }
      }),
      logRecords: scopeLogs.flatMap((scope) => messages(scope, 2).map(logRecord)),
    }
  })
