import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ServiceRuns } from "../../accuracy/ServiceRuns.ts"

const folders: Array<string> = []
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** A stand-in for the compiled CLI: a script that logs, prints a record and does what `body` says. */
const cliThat = async (body: string): Promise<{ cli: string; cwd: string }> => {
  const cwd = await mkdtemp(join(tmpdir(), "service-runs-"))
  folders.push(cwd)
  const cli = join(cwd, "cli.mjs")
  await writeFile(cli, body)
  return { cli, cwd }
}

const until = async (done: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe("ServiceRuns", () => {
  it("names a process that exits on its own with the last lines it logged, without a log file", async () => {
    const { cli, cwd } = await cliThat(
      [
        `for (let i = 0; i < 500; i++) process.stderr.write(JSON.stringify({ level: "INFO", message: "line " + i }) + "\\n")`,
        `process.stderr.write(JSON.stringify({ level: "ERROR", message: "inventory store unavailable after 3 attempts" }) + "\\n", () => process.exit(1))`,
      ].join("\n"),
    )
    const service = new ServiceRuns({ cli, cwd, env: {} })
    service.start()
    await until(() => service.failure !== undefined)
    await service.close()
    expect(service.failure).toMatch(/^run 0 exited on its own \(1\); its last log lines: /)
    expect(service.failure).toContain("inventory store unavailable after 3 attempts")
    expect(service.failure).toContain("line 499")
    expect(service.failure).not.toContain('"line 0"')
  })

  it("says nothing of a process stopped with SIGTERM that exits 0", async () => {
    const { cli, cwd } = await cliThat(
      [
        `process.stderr.write("starting\\n")`,
        `process.on("SIGTERM", () => process.exit(0))`,
        `setInterval(() => {}, 1000)`,
      ].join("\n"),
    )
    const service = new ServiceRuns({ cli, cwd, env: {} })
    service.start()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await service.restart()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await service.close()
    expect(service.failure).toBeUndefined()
  })
})
