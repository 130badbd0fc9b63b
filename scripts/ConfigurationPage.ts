import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { settingsReferenceMarkdown } from "../src/config/SettingsReference.ts"
import { builtinComponents } from "../src/service/BuiltinComponents.ts"

/** docs/configuration.md: the hand-written page of the template with the settings reference of this build in it. */
export const configurationPagePath = fileURLToPath(new URL("../docs/configuration.md", import.meta.url))

const templatePath = fileURLToPath(new URL("configuration.template.md", import.meta.url))
const placeholder = "{{settings reference}}"

/** The page `npm run docs` writes: the same table `--help` and `config print` follow, from the same settings. */
export const configurationPage = (): string => {
  const [head, tail, ...more] = readFileSync(templatePath, "utf8").split(placeholder)
  if (tail === undefined || more.length > 0) {
    throw new Error(`${templatePath} must hold ${placeholder} exactly once`)
  }
  return `${head}${settingsReferenceMarkdown(builtinComponents)}${tail}`
}
