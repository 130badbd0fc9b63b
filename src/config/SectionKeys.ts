import type { ConfigProblem } from "../component/Component.ts"
import { didYouMean } from "./ClosestName.ts"
import { type FileMapping, isFileMapping } from "./ResolveSettings.ts"

const joinPath = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

const unknownKeyMessage = (path: string, key: string, known: ReadonlyArray<string>): string => {
  if (path === "receivers") return `unknown receiver type ${JSON.stringify(key)} (known: ${known.join(", ")})`
  if (path === "processors") return `unknown processor type ${JSON.stringify(key)} (known: ${known.join(", ")})`
  return `unknown key${didYouMean(key, known)}`
}

/**
 * Reports keys of `mapping` (found at `path`) that lead to none of the dotted `leaves`, and non-mappings
 * where a section belongs.
 */
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
