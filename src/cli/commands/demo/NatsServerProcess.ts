import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"

/**
 * A nats-server process the demo starts from a config file: the executable found on the PATH or where
 * Debian's package puts it, started until it says it is ready, stopped with SIGTERM (SIGKILL after 5 s).
 */
export interface NatsServerProcess {
  readonly process: ChildProcess
  /** The start-up lines it wrote (at most 64 KiB): the ports it listens on. */
  readonly log: () => string
}

/** The line of a nats-server's log that names its client port. */
export const clientPortLine = /Listening for client connections on [^\s:]+:(\d+)/
/** The line of a nats-server's log that names its leaf-node port. */
export const leafPortLine = /Listening for leafnode connections on [^\s:]+:(\d+)/

const startTimeoutMs = 10_000
const stopTimeoutMs = 5_000

/** The nats-server executable: on the PATH, else in /usr/sbin; undefined when neither has it. */
export const natsServerExecutable = (path: string | undefined): string | undefined =>
  [...(path ?? "").split(delimiter).filter((folder) => folder !== ""), "/usr/sbin"]
    .map((folder) => join(folder, "nats-server"))
    .find((candidate) => existsSync(candidate))

/** Whether a nats-server's log says it serves clients. */
export const isReady = (log: string): boolean => log.includes("Server is ready")

/** Starts `executable -c configFile` and resolves once `ready(log)` holds; fails after 10 s or when it exits first. */
export const launchNatsServer = (
  executable: string,
  configFile: string,
  ready: (log: string) => boolean,
): Promise<NatsServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(executable, ["-c", configFile], { stdio: ["ignore", "pipe", "pipe"] })
    let log = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`nats-server did not start within ${startTimeoutMs / 1000}s:\n${log}`))
    }, startTimeoutMs)
    const onLog = (chunk: Buffer) => {
      // Only the start-up lines are kept; later output is read and dropped so the pipe never fills.
      if (log.length < 64 * 1024) log += chunk.toString("utf8")
      if (ready(log)) {
        clearTimeout(timer)
        resolve({ process: child, log: () => log })
      }
    }
    child.stderr?.on("data", onLog)
    child.stdout?.on("data", onLog)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`nats-server exited (${code}) before it was ready:\n${log}`))
    })
  })

/** Stops the server (SIGTERM, SIGKILL after 5 s) and waits for it to exit. */
export const stopNatsServer = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs)
        child.once("exit", () => {
          clearTimeout(timer)
          resolve()
        })
        child.kill("SIGTERM")
      })

/** The port a log line names; fails when the log has no such line. */
export const portIn = (log: string, line: RegExp): number => {
  const match = line.exec(log)
  if (match?.[1] === undefined) throw new Error(`nats-server did not say which port it listens on:\n${log}`)
  return Number(match[1])
}

/** A nats-server config: its name, client port on loopback, JetStream store and domain, and its leafnodes block. */
export const natsServerConfig = (settings: {
  readonly name: string
  readonly port: number
  readonly storeDir: string
  readonly domain: string
  readonly leafnodes: string
}): string =>
  [
    `server_name: ${JSON.stringify(settings.name)}`,
    `listen: "127.0.0.1:${settings.port}"`,
    `jetstream { store_dir: ${JSON.stringify(settings.storeDir)}, domain: ${JSON.stringify(settings.domain)} }`,
    settings.leafnodes,
    "",
  ].join("\n")
