import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import WebSocket from "ws"

export const repositoryRoot = fileURLToPath(new URL("../", import.meta.url))
const clockTicksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100
const inspectorDeadlineMs = 30_000

/** The file `gpu-serials` runs, as package.json's `bin` names it now (source or a build), absolute. */
export const cliEntry = (): string => {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as {
    readonly bin?: Readonly<Record<string, string>>
  }
  const entry = manifest.bin?.["gpu-serials"]
  if (entry === undefined) throw new Error("package.json names no bin gpu-serials")
  return join(repositoryRoot, entry)
}

/**
 * The V8 options the image runs the service with: the flags between `node` and the script in the
 * Dockerfile's ENTRYPOINT, so the bench measures what is deployed.
 */
export const deployedNodeFlags = (): ReadonlyArray<string> => {
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(join(repositoryRoot, "Dockerfile"), "utf8"))
  const argv = JSON.parse(entrypoint?.[1] ?? "[]") as ReadonlyArray<string>
  if (argv[0] !== "node") throw new Error("the Dockerfile's ENTRYPOINT does not run node")
  return argv.slice(1).filter((arg) => arg.startsWith("--"))
}

/** The service's Node flags: `SERVICE_NODE_FLAGS` (space-separated) when set, else the deployed ones. */
export const serviceNodeFlags = (): ReadonlyArray<string> => {
  const given = process.env.SERVICE_NODE_FLAGS
  return given === undefined ? deployedNodeFlags() : given.split(/\s+/).filter((flag) => flag !== "")
}

/** Where a library the image preloads may lie on this machine: Debian's paths for it, by its file name. */
const libraryFolders = ["/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]

/** The image's path of a preloaded library, or the same file in one of this machine's library folders. */
const localLibrary = (imagePath: string): string => {
  const name = basename(imagePath)
  const found = [imagePath, ...libraryFolders.map((folder) => join(folder, name))].find((path) => existsSync(path))
  if (found === undefined)
    throw new Error(
      `the image preloads ${imagePath}, which is not on this machine (nor ${name} in ${libraryFolders.join(", ")}): install its package (libjemalloc2 on Debian), or set SERVICE_ENV to run the service with other allocator settings`,
    )
  return found
}

/**
 * The memory allocator the image runs the service with: the Dockerfile's `ENV LD_PRELOAD=...` and
 * `ENV MALLOC_*=...` lines, the preloaded library found on this machine, so the bench measures what is
 * deployed.
 */
export const deployedAllocatorEnvironment = (): Readonly<Record<string, string>> =>
  Object.fromEntries(
    [
      ...readFileSync(join(repositoryRoot, "Dockerfile"), "utf8").matchAll(
        /^ENV\s+(LD_PRELOAD|MALLOC_\w+)=(\S+)\s*$/gm,
      ),
    ].map((match) => {
      const name = match[1] ?? ""
      const value = match[2] ?? ""
      return [name, name === "LD_PRELOAD" ? localLibrary(value) : value]
    }),
  )

/**
 * The allocator's settings for the service: `SERVICE_ENV` (space-separated `NAME=value`, empty for
 * glibc's malloc with its defaults) when set, else the deployed ones.
 */
export const serviceAllocatorEnvironment = (): Readonly<Record<string, string>> => {
  const given = process.env.SERVICE_ENV
  if (given === undefined) return deployedAllocatorEnvironment()
  return Object.fromEntries(
    given
      .split(/\s+/)
      .filter((entry) => entry !== "")
      .map((entry) => [entry.slice(0, Math.max(0, entry.indexOf("="))), entry.slice(entry.indexOf("=") + 1)]),
  )
}

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc. */
export const cpuMillis = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / clockTicksPerSecond
}

/** The most resident memory a process has had, in megabytes (VmHWM). */
export const peakRssMegabytes = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmHWM:"))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

/** `gpu-serials run` in its own process, with the V8 inspector on a free loopback port for heap figures. */
export interface ServiceProcess {
  readonly child: ChildProcess
  /** `performance.now()` just before the process was spawned. */
  readonly startedAt: number
  /** The inspector's WebSocket URL, once the process has printed it. */
  readonly inspector: Promise<string>
}

const inspectorBanner = /^Debugger listening on (ws:\/\/\S+)/
/** What Node prints about the inspector itself: kept off the bench output. */
const inspectorNoise =
  /^(Debugger (listening on|attached\.|ending on)|For help, see: https:\/\/nodejs\.org|Waiting for the debugger)/

/** `gpu-serials run` as a separate process; `onRecord` sees each record line as it arrives on stdout. */
export const startServiceProcess = (
  args: ReadonlyArray<string>,
  onRecord: (record: { readonly node: string; readonly event: string }) => void,
): ServiceProcess => {
  const startedAt = performance.now()
  const flags = serviceNodeFlags()
  const child = spawn(process.execPath, [...flags, "--inspect=127.0.0.1:0", cliEntry(), "run", ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", ...serviceAllocatorEnvironment() },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let pending = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString()
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) if (line !== "") onRecord(JSON.parse(line) as { node: string; event: string })
  })
  const inspector = new Promise<string>((resolve, reject) => {
    let errors = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      errors += chunk.toString()
      const lines = errors.split("\n")
      errors = lines.pop() ?? ""
      for (const line of lines) {
        const banner = inspectorBanner.exec(line)
        if (banner?.[1] !== undefined) resolve(banner[1])
        if (!inspectorNoise.test(line)) process.stderr.write(`${line}\n`)
      }
    })
    child.once("exit", () => reject(new Error("the service exited before its inspector listened")))
  })
  inspector.catch(() => undefined)
  return { child, startedAt, inspector }
}

/** What the service's heap holds after a full garbage collection, in megabytes. */
export interface HeapFigures {
  /** Everything V8's heap holds that is alive (`Runtime.getHeapUsage`). */
  readonly liveMegabytes: number
  /** Of that, code: compiled code and bytecode with their metadata, which grow while V8 compiles, whatever the data does. */
  readonly codeMegabytes: number
}

/** V8's compiled code and bytecode with their metadata (feedback vectors, ...), which the heap holds beside the data. */
const codeExpression =
  "(({ code_and_metadata_size, bytecode_and_metadata_size }) => code_and_metadata_size + bytecode_and_metadata_size)(process.getBuiltinModule('node:v8').getHeapCodeStatistics())"

/** Calls `method` on the service's inspector, one WebSocket for all the calls `session` makes. */
export type InspectorCall = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>

export const withInspector = async <A>(
  service: ServiceProcess,
  session: (call: InspectorCall) => Promise<A>,
): Promise<A> => {
  const socket = new WebSocket(await service.inspector)
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve())
      socket.once("error", reject)
    })
    let nextId = 0
    const call: InspectorCall = (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++nextId
        const timer = setTimeout(() => reject(new Error(`no answer to ${method}`)), inspectorDeadlineMs)
        const onMessage = (message: Buffer) => {
          const answer = JSON.parse(message.toString()) as {
            id?: number
            result?: Record<string, unknown>
            error?: { message: string }
          }
          if (answer.id !== id) return
          socket.off("message", onMessage)
          clearTimeout(timer)
          if (answer.error !== undefined) reject(new Error(`${method}: ${answer.error.message}`))
          else resolve(answer.result ?? {})
        }
        socket.on("message", onMessage)
        socket.send(JSON.stringify({ id, method, params }))
      })
    return await session(call)
  } finally {
    socket.close()
  }
}

/**
 * The service's heap after a full garbage collection through the inspector: what is alive, and how much
 * of it is compiled code.
 */
export const heapFigures = (service: ServiceProcess): Promise<HeapFigures> =>
  withInspector(service, async (call) => {
    await call("HeapProfiler.collectGarbage")
    const usage = await call("Runtime.getHeapUsage")
    const code = await call("Runtime.evaluate", { expression: codeExpression, returnByValue: true })
    const codeBytes = Number((code.result as { value?: unknown } | undefined)?.value ?? 0)
    return { liveMegabytes: Number(usage.usedSize) / 1024 / 1024, codeMegabytes: codeBytes / 1024 / 1024 }
  })

/** What V8 and Node hold beside the live heap, as `process.memoryUsage()` tells it, in megabytes. */
export interface CommittedFigures {
  /** The pages V8's heap has taken from the system, live objects or not (`heapTotal`). */
  readonly heapCommittedMegabytes: number
  /** Memory of JavaScript objects held outside V8's heap: buffers, typed arrays, native objects (`external`). */
  readonly externalMegabytes: number
  /** Of `external`, the ArrayBuffers and Buffers (`arrayBuffers`). */
  readonly arrayBuffersMegabytes: number
  /** Handles that keep the event loop alive (sockets, servers, timers), as `process.getActiveResourcesInfo()` counts them. */
  readonly activeResources: number
}

const committedExpression =
  "(({ heapTotal, external, arrayBuffers }) => [heapTotal, external, arrayBuffers, process.getActiveResourcesInfo().length])(process.memoryUsage())"

/** The service's committed heap, external memory and active resources, through the inspector (no collection). */
export const committedFigures = (service: ServiceProcess): Promise<CommittedFigures> =>
  withInspector(service, async (call) => {
    const answer = await call("Runtime.evaluate", { expression: committedExpression, returnByValue: true })
    const values = ((answer.result as { value?: unknown } | undefined)?.value ?? []) as ReadonlyArray<number>
    const megabytes = (at: number) => Number(values[at] ?? Number.NaN) / 1024 / 1024
    return {
      heapCommittedMegabytes: megabytes(0),
      externalMegabytes: megabytes(1),
      arrayBuffersMegabytes: megabytes(2),
      activeResources: Number(values[3] ?? Number.NaN),
    }
  })

/** A process's resident memory by kind, from `/proc/<pid>/smaps_rollup`, in megabytes. */
export interface ResidentFigures {
  readonly rssMegabytes: number
  /** Resident pages with no file behind them: V8's heap, the allocator's arenas, thread stacks. */
  readonly anonymousMegabytes: number
  /** Resident pages of mapped files (the node binary, shared libraries): `Rss` less `Anonymous`. */
  readonly fileBackedMegabytes: number
}

export const residentFigures = (pid: number): ResidentFigures => {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  const kilobytes = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? Number.NaN)
  const rss = kilobytes("Rss")
  const anonymous = kilobytes("Anonymous")
  return {
    rssMegabytes: rss / 1024,
    anonymousMegabytes: anonymous / 1024,
    fileBackedMegabytes: (rss - anonymous) / 1024,
  }
}

/**
 * Writes a heap snapshot of the service to `path` (absolute; V8 collects garbage first), for Chrome's
 * DevTools or a diff of two: the service writes it itself with `v8.writeHeapSnapshot`.
 */
export const writeHeapSnapshot = (service: ServiceProcess, path: string): Promise<void> =>
  withInspector(service, async (call) => {
    const written = await call("Runtime.evaluate", {
      expression: `process.getBuiltinModule('node:v8').writeHeapSnapshot(${JSON.stringify(path)})`,
      returnByValue: true,
    })
    if ((written.result as { value?: unknown } | undefined)?.value !== path)
      throw new Error(`the service did not write its heap snapshot to ${path}`)
  })

/**
 * The service's live heap in megabytes: a full garbage collection through the inspector, then the
 * heap in use (V8's `Runtime.getHeapUsage`).
 */
export const liveHeapMegabytes = async (service: ServiceProcess): Promise<number> =>
  (await heapFigures(service)).liveMegabytes

/** The resident memory a process has now, in megabytes (VmRSS). */
export const rssMegabytes = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmRSS:"))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

/** Milliseconds from the spawn to the first 200 from `/readyz` on `port`, asking every 20 ms. */
export const timeToReady = async (service: ServiceProcess, port: number, timeoutMs: number): Promise<number> => {
  const deadline = service.startedAt + timeoutMs
  while (performance.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error("the service exited before it was ready")
    const answer = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) }).catch(
      () => undefined,
    )
    const readyAt = performance.now()
    await answer?.body?.cancel()
    if (answer?.status === 200) return readyAt - service.startedAt
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`the service was not ready within ${timeoutMs / 1000} s`)
}

export const stopServiceProcess = (service: ServiceProcess): Promise<number | null> =>
  new Promise((resolve) => {
    if (service.child.exitCode !== null) return resolve(service.child.exitCode)
    service.child.once("exit", (code) => resolve(code))
    service.child.kill("SIGTERM")
  })
