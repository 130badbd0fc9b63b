import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { configurationPage, configurationPagePath } from "../../scripts/ConfigurationPage.ts"
import { settingsReferenceMarkdown } from "../../src/config/SettingsReference.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"

const committed = readFileSync(configurationPagePath, "utf8")

describe("docs/configuration.md", () => {
  it("is what npm run docs writes from its template and the settings of this build", () => {
    expect(committed, "docs/configuration.md is stale: run npm run docs").toBe(configurationPage())
  })

  it("carries the configuration reference that --help and config print follow", () => {
    expect(committed).toContain(settingsReferenceMarkdown(builtinComponents))
  })
})
