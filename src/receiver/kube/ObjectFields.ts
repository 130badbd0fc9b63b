/**
 * Reading the few fields the receiver keeps of a listed or watched object, as the API server sends them in
 * JSON: a field may be left out or sent as null (both read as `undefined`), and a field of another type
 * makes the whole object unreadable (`invalid`). Plain checks rather than a Schema decoder: a first list
 * of 10,000 pods and 10,000 nodes decodes in a few milliseconds instead of about 300.
 */
export const invalid: unique symbol = Symbol("invalid")

/** A field's value, `undefined` when absent or null, or `invalid` when of another type. */
export type Field<A> = A | undefined | typeof invalid

export type Fields = Readonly<Record<string, unknown>>

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An object (a JSON object, not an array). */
export const objectField = (value: unknown): Field<Fields> =>
  value === undefined || value === null ? undefined : isFields(value) ? value : invalid

export const stringField = (value: unknown): Field<string> =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : invalid

/** An array whose every element `element` reads; `invalid` when one cannot be read. */
export const arrayField = <A>(value: unknown, element: (item: unknown) => A | typeof invalid): Field<Array<A>> => {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value)) return invalid
  const read: Array<A> = []
  for (const item of value) {
    const one = element(item)
    if (one === invalid) return invalid
    read.push(one)
  }
  return read
}

/** A map of strings to strings (labels), each value checked; `invalid` when one is not a string. */
export const stringMapField = (value: unknown): Field<Readonly<Record<string, string>>> => {
  const fields = objectField(value)
  if (fields === undefined || fields === invalid) return fields
  for (const key in fields) {
    if (typeof fields[key] !== "string") return invalid
  }
  return fields as Readonly<Record<string, string>>
}
