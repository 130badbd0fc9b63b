import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

/** A nats-server with JetStream on a random loopback port, its store in a temporary folder. */
export interface NatsServerProcess {
  readonly url: string
  /** Stops the server and removes its store. */
  readonly stop: () => Promise<void>
}

const listening = /Listening for client connections on [^\s:]+:(\d+)/
const startDeadlineMs = 10_000

/** The nats-server executable: on the PATH, else where Debian's package puts it; undefined when neither has it. */
export const natsServerExecutable = (): string | undefined =>
  [...(process.env.PATH ?? "").split(delimiter).filter((folder) => folder !== ""), "/usr/sbin"]
    .map((folder) => join(folder, "nats-server"))
    .find((path) => existsSync(path))

const stopped = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => {
        const killer = setTimeout(() => child.kill("SIGKILL"), 5_000)
        child.once("exit", () => {
          clearTimeout(killer)
          resolve()
        })
        child.kill("SIGTERM")
      })

/** Starts `nats-server -js -sd <tmp> -a 127.0.0.1 -p -1` and reads its port from its log. */
export const startNatsServer = async (executable: string): Promise<NatsServerProcess> => {
  const storeDir = await mkdtemp(join(tmpdir(), "gpu-serials-accuracy-nats-"))
  const child = spawn(executable, ["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", "-1"], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  const port = await new Promise<number>((resolve, reject) => {
    let log = ""
    const timer = setTimeout(
      () => reject(new Error(`nats-server did not start within ${startDeadlineMs} ms`)),
      startDeadlineMs,
    )
    const onLog = (chunk: Buffer) => {
      log += chunk.toString("utf8")
      const match = listening.exec(log)
      if (match?.[1] === undefined || !log.includes("Server is ready")) return
      clearTimeout(timer)
      child.stderr?.off("data", onLog)
      child.stdout?.off("data", onLog)
      child.stderr?.resume()
      child.stdout?.resume()
      resolve(Number(match[1]))
    }
    child.stderr?.on("data", onLog)
    child.stdout?.on("data", onLog)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
  }).catch(async (error: unknown) => {
    await stopped(child)
    await rm(storeDir, { recursive: true, force: true })
    throw error
  })
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      await stopped(child)
      await rm(storeDir, { recursive: true, force: true })
    },
  }
}
