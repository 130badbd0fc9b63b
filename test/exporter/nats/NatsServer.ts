import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { natsServerExecutable as findNatsServer } from "../../../src/cli/commands/demo/NatsServerProcess.ts"

const listening = /Listening for client connections on [^\s:]+:(\d+)/

/** A nats-server with JetStream on a random port, its store in a temporary folder. */
export interface NatsServer {
  readonly url: string
  readonly port: number
  /** Stops the server (SIGTERM) and waits for it to exit. */
  readonly stop: () => Promise<void>
  /** Starts a new server process on the same port and store. */
  readonly restart: () => Promise<void>
  /** Kills the server at once (SIGKILL), as a crash or an OOM kill would, and waits for it to exit. */
  readonly kill: () => Promise<void>
  /** Starts the server again, after `kill` or `stop`, on the same port, store and config. */
  readonly start: () => Promise<void>
  /** Stops the server and removes its store. */
  readonly dispose: () => Promise<void>
}

/** The nats-server executable: on the PATH, else where Debian's package puts it; undefined when neither has it. */
export const natsServerExecutable = (): string | undefined => findNatsServer(process.env.PATH)

const launch = (
  storeDir: string,
  port: number,
  configFile: string | undefined,
  extraArgs: ReadonlyArray<string>,
): Promise<{ process: ChildProcess; port: number }> =>
  new Promise((resolve, reject) => {
    const args = [
      ...(configFile === undefined ? [] : ["-c", configFile]),
      ...["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", String(port)],
      ...extraArgs,
    ]
    const child = spawn(natsServerExecutable() ?? "nats-server", args, { stdio: ["ignore", "pipe", "pipe"] })
    let log = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`nats-server did not start within 10s:\n${log}`))
    }, 10_000)
    const onLog = (chunk: Buffer) => {
      log += chunk.toString("utf8")
      const match = listening.exec(log)
      if (match?.[1] !== undefined && log.includes("Server is ready")) {
        clearTimeout(timer)
        child.stderr?.off("data", onLog)
        child.stdout?.off("data", onLog)
        child.stderr?.resume()
        child.stdout?.resume()
        resolve({ process: child, port: Number(match[1]) })
      }
    }
    child.stderr?.on("data", onLog)
    child.stdout?.on("data", onLog)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })

const terminate = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
        child.once("exit", () => {
          clearTimeout(timer)
          resolve()
        })
        child.kill("SIGTERM")
      })

const killNow = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGKILL")
      })

/**
 * Starts `nats-server -js -sd <tmp> -a 127.0.0.1 -p -1` (`natsServerExecutable`) and reads its port from the log.
 * `config` is the text of a server config file (users and permissions, JetStream limits); the
 * command-line options above take precedence over it. `args` adds options such as `--auth TOKEN`.
 */
export const startNatsServer = async (
  options: { readonly config?: string; readonly args?: ReadonlyArray<string> } = {},
): Promise<NatsServer> => {
  const storeDir = mkdtempSync(join(tmpdir(), "gpu-serials-nats-"))
  const configFile = options.config === undefined ? undefined : join(storeDir, "nats-server.conf")
  if (configFile !== undefined) writeFileSync(configFile, options.config ?? "")
  const extraArgs = options.args ?? []
  let current = await launch(storeDir, -1, configFile, extraArgs)
  const port = current.port
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop: () => terminate(current.process),
    restart: async () => {
      await terminate(current.process)
      current = await launch(storeDir, port, configFile, extraArgs)
    },
    kill: () => killNow(current.process),
    start: async () => {
      current = await launch(storeDir, port, configFile, extraArgs)
    },
    dispose: async () => {
      await terminate(current.process)
      rmSync(storeDir, { recursive: true, force: true })
    },
  }
}
