import { Result } from "effect"
import { type LabelRequirement, parseLabelSelector as parseRequirements } from "../../config/LabelSelector.ts"
import { badRequest } from "./ApiStatus.ts"

/** A label selector of a list or watch request, ready to match objects' labels. */
export interface LabelSelector {
  readonly requirements: ReadonlyArray<LabelRequirement>
  matches(labels: Readonly<Record<string, string>> | undefined): boolean
}

export const everything: LabelSelector = { requirements: [], matches: () => true }

/**
 * Parses the `labelSelector` query parameter with the grammar of the API server (the same parser that
 * checks `LABEL_SELECTOR`); a bad one is a 400.
 */
export const parseLabelSelector = (text: string | null | undefined): LabelSelector => {
  const source = (text ?? "").trim()
  if (source === "") return everything
  const parsed = parseRequirements(source)
  if (Result.isFailure(parsed)) {
    throw badRequest(`unable to parse requirement: ${parsed.failure} (in selector "${source}")`)
  }
  const requirements = parsed.success
  return {
    requirements,
    matches: (labels) => requirements.every((requirement) => requirementMatches(requirement, labels ?? {})),
  }
}

const requirementMatches = (requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean => {
  const present = Object.hasOwn(labels, requirement.key)
  const value = labels[requirement.key]
  switch (requirement.operator) {
    case "=":
    case "in":
      return present && value !== undefined && requirement.values.includes(value)
    case "!=":
    case "notin":
      return !present || value === undefined || !requirement.values.includes(value)
    case "exists":
      return present
    case "!":
      return !present
    case ">":
    case "<": {
      const bound = Number.parseInt(requirement.values[0] ?? "", 10)
      const number = Number.parseInt(value ?? "", 10)
      if (!present || !Number.isInteger(number) || !Number.isInteger(bound)) return false
      return requirement.operator === ">" ? number > bound : number < bound
    }
  }
}
