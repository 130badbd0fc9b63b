import { badRequest } from "./ApiStatus.ts"

/** One requirement of a Kubernetes label selector (`k8s.io/apimachinery/pkg/labels`). */
export type LabelRequirement =
  | { readonly key: string; readonly operator: "=" | "!="; readonly value: string }
  | { readonly key: string; readonly operator: "in" | "notin"; readonly values: ReadonlySet<string> }
  | { readonly key: string; readonly operator: "exists" | "!exists" }
  | { readonly key: string; readonly operator: ">" | "<"; readonly bound: number }

export interface LabelSelector {
  readonly requirements: ReadonlyArray<LabelRequirement>
  matches(labels: Readonly<Record<string, string>> | undefined): boolean
}

export const everything: LabelSelector = { requirements: [], matches: () => true }

const keyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/
const valuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

/** Parses the `labelSelector` query parameter with the grammar of the API server; a bad one is a 400. */
export const parseLabelSelector = (text: string | null | undefined): LabelSelector => {
  const source = (text ?? "").trim()
  if (source === "") return everything
  const requirements = splitTopLevel(source).map((part) => parseRequirement(part.trim(), source))
  return {
    requirements,
    matches: (labels) => requirements.every((requirement) => requirementMatches(requirement, labels ?? {})),
  }
}

/** Splits on commas that are not inside a `( ... )` value set. */
const splitTopLevel = (source: string): string[] => {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let index = 0; index < source.length; index++) {
    const char = source[index]
    if (char === "(") depth++
    else if (char === ")") depth--
    else if (char === "," && depth === 0) {
      parts.push(source.slice(start, index))
      start = index + 1
    }
  }
  parts.push(source.slice(start))
  return parts
}

const setPattern = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/
const comparePattern = /^([^\s!=<>]+)\s*(==|=|!=|>|<)\s*(.*)$/

const parseRequirement = (part: string, source: string): LabelRequirement => {
  if (part === "") throw selectorError(source, "found '', expected: identifier")
  if (part.startsWith("!")) {
    const key = checkKey(part.slice(1).trim(), source)
    return { key, operator: "!exists" }
  }
  const set = setPattern.exec(part)
  if (set !== null) {
    const key = checkKey(set[1] ?? "", source)
    const values = (set[3] ?? "")
      .split(",")
      .map((value) => value.trim())
      .map((value) => checkValue(value, source))
    return { key, operator: set[2] === "in" ? "in" : "notin", values: new Set(values) }
  }
  const compare = comparePattern.exec(part)
  if (compare !== null) {
    const key = checkKey(compare[1] ?? "", source)
    const operator = compare[2]
    const value = (compare[3] ?? "").trim()
    if (operator === ">" || operator === "<") {
      const bound = Number.parseInt(value, 10)
      if (!Number.isInteger(bound) || String(bound) !== value)
        throw selectorError(source, `for 'Gt', 'Lt' operators, the value must be an integer`)
      return { key, operator, bound }
    }
    return { key, operator: operator === "!=" ? "!=" : "=", value: checkValue(value, source) }
  }
  return { key: checkKey(part, source), operator: "exists" }
}

const checkKey = (key: string, source: string): string => {
  if (!keyPattern.test(key) || key.length > 317) throw selectorError(source, `invalid label key "${key}"`)
  return key
}

const checkValue = (value: string, source: string): string => {
  if (value.length > 63 || !valuePattern.test(value)) throw selectorError(source, `invalid label value: "${value}"`)
  return value
}

const selectorError = (source: string, detail: string) =>
  badRequest(`unable to parse requirement: ${detail} (in selector "${source}")`)

const requirementMatches = (requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean => {
  const present = Object.hasOwn(labels, requirement.key)
  const value = labels[requirement.key]
  switch (requirement.operator) {
    case "=":
      return present && value === requirement.value
    case "!=":
      return !present || value !== requirement.value
    case "in":
      return present && value !== undefined && requirement.values.has(value)
    case "notin":
      return !present || value === undefined || !requirement.values.has(value)
    case "exists":
      return present
    case "!exists":
      return !present
    case ">":
    case "<": {
      if (!present || value === undefined) return false
      const number = Number.parseInt(value, 10)
      if (!Number.isInteger(number)) return false
      return requirement.operator === ">" ? number > requirement.bound : number < requirement.bound
    }
  }
}
