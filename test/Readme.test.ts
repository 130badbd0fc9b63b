import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { settingsReferenceMarkdown } from "../src/config/SettingsReference.ts"
import { recordFields } from "../src/exporter/RecordJson.ts"
import { nvsmiErrorKinds } from "../src/nvsmi/NvsmiError.ts"
import { builtinComponents } from "../src/service/BuiltinComponents.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

describe("README", () => {
  it("carries the configuration reference of the settings this build has", () => {
    expect(readme).toContain(settingsReferenceMarkdown(builtinComponents))
  })

  it("documents every record field and every nvidia-smi error kind", () => {
    for (const field of recordFields) expect(readme).toContain(`\`${field}\``)
    for (const kind of nvsmiErrorKinds) expect(readme).toContain(`| \`${kind}\` |`)
  })

  it("shows the install, test and benchmark commands", () => {
    for (const command of ["npm ci", "npm test", "npm run bench"]) expect(readme).toContain(command)
  })
})
