import { badRequest } from "./ApiStatus.ts"
import type { JsonObject } from "./Json.ts"

/** A `fieldSelector` over the few fields each resource indexes, as the API server allows. */
export interface FieldSelector {
  matches(object: JsonObject): boolean
}

interface FieldRequirement {
  readonly field: string
  readonly negated: boolean
  readonly value: string
}

export type FieldReader = (object: JsonObject) => string

export const matchAll: FieldSelector = { matches: () => true }

export const parseFieldSelector = (
  text: string | null | undefined,
  fields: Readonly<Record<string, FieldReader>>,
): FieldSelector => {
  const source = (text ?? "").trim()
  if (source === "") return matchAll
  const requirements = source.split(",").map((part): FieldRequirement => {
    const match = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part)
    if (match === null) throw badRequest(`invalid selector: '${source}'; can't understand '${part}'`)
    return { field: match[1] ?? "", negated: match[2] === "!=", value: match[3] ?? "" }
  })
  for (const requirement of requirements)
    if (fields[requirement.field] === undefined) throw badRequest(`field label not supported: ${requirement.field}`)
  return {
    matches: (object) =>
      requirements.every((requirement) => {
        const read = fields[requirement.field]
        const actual = read === undefined ? "" : read(object)
        return requirement.negated ? actual !== requirement.value : actual === requirement.value
      }),
  }
}
