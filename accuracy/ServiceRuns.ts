import { type ChildProcess, spawn } from "node:child_process"
import { createWriteStream, type WriteStream } from "node:fs"
import { finished } from "node:stream/promises"
import { type ExportedEvent, exportedEvent } from "./ExportedEvent.ts"
import type { ServiceRunSpan } from "./TruthComparison.ts"

/** How long a service may take to exit after SIGTERM before it is killed (its own shutdown deadline is shorter). */
const exitDeadlineMs = 30_000

/** How much of the end of a process's stderr (its last log lines) a failure quotes. */
const failureLogTailChars = 2_000

export interface ServiceRunsOptions {
  /** Absolute path of the compiled `gpu-serials` CLI. */
  readonly cli: string
  readonly cwd: string
  /** The service's whole environment (settings as variables), besides PATH. */
  readonly env: Readonly<Record<string, string>>
  /** Where each process's stderr (its JSON logs) is appended; discarded when absent. */
  readonly logPath?: string
  /** Where every record line is appended, prefixed with the run number; discarded when absent. */
  readonly recordsPath?: string
}

/**
 * One service under test, run as `gpu-serials run` processes one after another (a restart stops one and
 * starts the next), with the records each exported on stdout collected in order.
 */
export class ServiceRuns {
  private readonly options: ServiceRunsOptions
  private readonly exported: Array<ExportedEvent> = []
  private readonly spans: Array<{ startedAt: number; stoppedAt?: number }> = []
  private readonly log: WriteStream | undefined
  private readonly records: WriteStream | undefined
  private child: ChildProcess | undefined
  private exited: Promise<number | null> | undefined
  private unexpectedExit: string | undefined
  private closed = false

  constructor(options: ServiceRunsOptions) {
    this.options = options
    this.log = options.logPath === undefined ? undefined : createWriteStream(options.logPath, { flags: "a" })
    this.records = options.recordsPath === undefined ? undefined : createWriteStream(options.recordsPath)
  }

  /** The events exported so far, in order. */
  get events(): ReadonlyArray<ExportedEvent> {
    return this.exported
  }

  /**
   * When each process was reading: from its first exported record (its spawn, when it exported none)
   * until it stopped; one still running counts as running until `now`.
   */
  runs(now: number): ReadonlyArray<ServiceRunSpan> {
    return this.spans.map((span, run) => ({
      startedAt: this.exported.find((event) => event.run === run)?.arrivedAt ?? span.startedAt,
      stoppedAt: span.stoppedAt ?? now,
    }))
  }

  /** Why a process ended before it was asked to, if one did, with the last of what it logged. */
  get failure(): string | undefined {
    return this.unexpectedExit
  }

  start(): void {
    if (this.child !== undefined) throw new Error("the service is running already")
    const run = this.spans.length
    this.spans.push({ startedAt: Date.now() })
    const child = spawn(process.execPath, [this.options.cli, "run"], {
      cwd: this.options.cwd,
      env: { PATH: process.env.PATH ?? "", ...this.options.env },
      stdio: ["ignore", "pipe", "pipe"],
    })
    this.child = child
    let logTail = ""
    let exitedOnItsOwn = false
    child.once("exit", () => {
      exitedOnItsOwn = this.child === child
    })
    // "close" comes after stderr has ended, so the tail then holds the process's last words.
    this.exited = new Promise((resolve) =>
      child.once("close", (code, signal) => {
        const said = logTail.trim()
        if (exitedOnItsOwn)
          this.unexpectedExit ??= `run ${run} exited on its own (${signal ?? code})${said === "" ? "" : `; its last log lines: ${said}`}`
        resolve(code)
      }),
    )
    let pending = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      const arrivedAt = Date.now()
      pending += chunk.toString("utf8")
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        const event = exportedEvent(line, run, arrivedAt)
        if (event !== undefined) this.exported.push(event)
        this.records?.write(`${run} ${line}\n`)
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      logTail = (logTail + chunk.toString("utf8")).slice(-failureLogTailChars)
    })
    if (this.log !== undefined) child.stderr?.pipe(this.log, { end: false })
  }

  /** Stops the running process with SIGTERM (its graceful shutdown) and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.child
    const exited = this.exited
    if (child === undefined || exited === undefined) return
    this.child = undefined
    const killer = setTimeout(() => child.kill("SIGKILL"), exitDeadlineMs)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    const code = await exited
    clearTimeout(killer)
    const span = this.spans.at(-1)
    if (span !== undefined) span.stoppedAt = Date.now()
    if (code !== 0) this.unexpectedExit ??= `run ${this.spans.length - 1} exited with ${code} after SIGTERM`
  }

  /** A restart: the running process stops, then a new one starts. */
  async restart(): Promise<void> {
    await this.stop()
    this.start()
  }

  /** Stops the service and finishes writing its files. */
  async close(): Promise<void> {
    await this.stop()
    if (this.closed) return
    this.closed = true
    for (const stream of [this.log, this.records]) {
      if (stream === undefined) continue
      stream.end()
      await finished(stream)
    }
  }
}
