import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { recordFields } from "../src/exporter/RecordJson.ts"
import { nvsmiErrorKinds } from "../src/nvsmi/NvsmiError.ts"

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8")
const readme = read("README.md")
const recordPage = read("docs/record.md")

describe("README", () => {
  it("shows the install, test, demo and benchmark commands", () => {
    for (const command of ["npm ci", "npm test", "npm run demo", "npm run bench"]) expect(readme).toContain(command)
  })
})

describe("docs/record.md", () => {
  it("documents every record field and every nvidia-smi error kind", () => {
    for (const field of recordFields) expect(recordPage).toContain(`\`${field}\``)
    for (const kind of nvsmiErrorKinds) expect(recordPage).toContain(`| \`${kind}\` |`)
  })
})
