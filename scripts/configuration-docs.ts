/** `npm run docs`: writes docs/configuration.md from its template and the settings of this build. */
import { writeFileSync } from "node:fs"
import { relative } from "node:path"
import { configurationPage, configurationPagePath } from "./ConfigurationPage.ts"

writeFileSync(configurationPagePath, configurationPage())
process.stdout.write(`wrote ${relative(process.cwd(), configurationPagePath)}\n`)
