import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repositoryRoot = fileURLToPath(new URL("../", import.meta.url))
const userPath = (process.env.PATH ?? "")
  .split(":")
  .filter((entry) => !entry.includes("node_modules"))
  .join(":")

describe("runtime", () => {
  it("runs on the Node 24 that the project pins, not the system Node", () => {
    expect(Number(process.versions.node.split(".")[0])).toBe(24)
    expect(process.execPath).toContain("node_modules")
  })

  it("keeps `npx gpu-serials` quiet on stderr although npm itself may run on an older Node", () => {
    const run = spawnSync("npx", ["gpu-serials", "version"], {
      cwd: repositoryRoot,
      // The user's PATH, without the project's Node 24 that npm and vitest put first: npm then runs on the system Node.
      env: { PATH: userPath, HOME: process.env.HOME ?? "" },
      encoding: "utf8",
      timeout: 60_000,
    })
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^gpu-serials .* node 24\./)
    expect(run.stderr).toBe("")
  }, 60_000)
})
