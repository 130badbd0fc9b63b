import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, it } from "vitest"

/** The nvidia-smi corpus lives beside the repository (`<repo root>/../shared/fixtures/nvidia-smi`), never in it. */
export const fixtureDirectory = fileURLToPath(new URL("../../../shared/fixtures/nvidia-smi/", import.meta.url))

export const fixturesPresent = existsSync(fixtureDirectory)

export const readFixture = (name: string): Buffer => readFileSync(join(fixtureDirectory, name))

export const readFixtureText = (name: string): string => readFixture(name).toString("utf8")

/**
 * `describe` for tests that read the corpus. Without the corpus they are skipped with a note, except on CI
 * (`CI=true`), where a missing corpus is a failing test.
 */
export const describeWithFixtures = (name: string, body: () => void): void => {
  if (fixturesPresent) {
    describe(name, body)
    return
  }
  if (process.env.CI === "true") {
    describe(name, () => {
      it("finds the nvidia-smi fixture corpus", () => {
        throw new Error(`the nvidia-smi fixture corpus is missing: expected it at ${fixtureDirectory}`)
      })
    })
    return
  }
  console.warn(`skipping "${name}": the nvidia-smi fixture corpus is not at ${fixtureDirectory}`)
  describe.skip(name, body)
}
