import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import * as tls from "node:tls"
import WebSocket, { type ClientOptions, type RawData } from "ws"
import { parse } from "yaml"
import { type KubeRequestOptions, staticAccess } from "../src/kubeclient/clientcmd/ClusterAccess.ts"
import type { ExecFloorDone, ExecFloorRun } from "./ExecFloor.ts"

/**
 * The least a client can spend on an exec: the kubeconfig's server, CA and token, the service's own agent
 * (`staticAccess`: kept-alive connections, TLS sessions resumed) and one TLS context for every connection,
 * the WebSocket exec protocols the service offers, and each frame only counted: no parsing, no Effect, no
 * streams. Given the run as the first line on stdin, it says `ready`, waits for the next line, runs the
 * execs at most `workers` at once and `qps` a second (burst `qps`, as the service is run), then prints
 * what it did.
 */
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const run = JSON.parse(String((await lines.next()).value ?? "{}")) as ExecFloorRun

interface KubeconfigFile {
  readonly "current-context"?: string
  readonly contexts?: ReadonlyArray<{ readonly name: string; readonly context: { cluster: string; user: string } }>
  readonly clusters?: ReadonlyArray<{
    readonly name: string
    readonly cluster: {
      readonly server: string
      readonly "certificate-authority-data"?: string
      readonly "certificate-authority"?: string
      readonly "insecure-skip-tls-verify"?: boolean
      readonly "tls-server-name"?: string
    }
  }>
  readonly users?: ReadonlyArray<{ readonly name: string; readonly user: { readonly token?: string } }>
}

const kubeconfig = parse(readFileSync(run.kubeconfigPath, "utf8")) as KubeconfigFile
const context = kubeconfig.contexts?.find((entry) => entry.name === kubeconfig["current-context"])?.context
const cluster = kubeconfig.clusters?.find((entry) => entry.name === context?.cluster)?.cluster
const token = kubeconfig.users?.find((entry) => entry.name === context?.user)?.user.token
if (cluster === undefined) throw new Error(`${run.kubeconfigPath}: no cluster for the current context`)
const secure = cluster.server.startsWith("https:")
// The service's own access (its agent: kept-alive connections, TLS sessions) filled once, and one TLS context.
const access: KubeRequestOptions = {}
await staticAccess(
  {
    server: cluster.server,
    insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
    ...(cluster["certificate-authority-data"] === undefined
      ? {}
      : { certificateAuthorityData: cluster["certificate-authority-data"] }),
    ...(cluster["certificate-authority"] === undefined
      ? {}
      : { certificateAuthority: cluster["certificate-authority"] }),
    ...(cluster["tls-server-name"] === undefined ? {} : { tlsServerName: cluster["tls-server-name"] }),
  },
  token === undefined ? {} : { token },
).applyTo(access)
if (secure) access.secureContext = tls.createSecureContext(access.ca === undefined ? {} : { ca: access.ca })
const options = {
  ...(access as unknown as ClientOptions),
  perMessageDeflate: false,
  handshakeTimeout: run.execTimeoutMs,
}
const socketBase = cluster.server.replace(/^http/, "ws")
const protocols = ["v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"]
const statusChannel = 3

let bytes = 0
let failures = 0
let protocol = ""

/** One exec: open, count stdout and stderr bytes, done at the status frame and the close. */
const exec = (path: string): Promise<void> =>
  new Promise((resolve) => {
    const socket = new WebSocket(socketBase + path, protocols, options)
    let succeeded = false
    const deadline = setTimeout(() => socket.terminate(), run.execTimeoutMs)
    socket.on("open", () => {
      protocol = socket.protocol
    })
    socket.on("message", (data: RawData) => {
      const frame = data as Buffer
      bytes += frame.length
      // The API server opens each channel with an empty frame; the status comes in one with a payload.
      if (frame[0] === statusChannel && frame.length > 1) {
        succeeded = frame.includes('"Success"')
        socket.close()
      }
    })
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(deadline)
      if (!succeeded) failures++
      resolve()
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The service's token bucket: `qps` a second, a burst of `qps`. */
let tokens = run.qps
let filledAt = performance.now()
const takeToken = async (): Promise<void> => {
  for (;;) {
    const now = performance.now()
    tokens = Math.min(run.qps, tokens + ((now - filledAt) / 1000) * run.qps)
    filledAt = now
    if (tokens >= 1) {
      tokens -= 1
      return
    }
    await sleep(((1 - tokens) / run.qps) * 1000)
  }
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
await lines.next()
const startedAt = performance.now()
let next = 0
const worker = async (): Promise<void> => {
  while (next < run.paths.length) {
    const path = run.paths[next++] as string
    await takeToken()
    await exec(path)
  }
}
await Promise.all(Array.from({ length: run.workers }, worker))
const done: ExecFloorDone = {
  execs: run.paths.length,
  failures,
  bytes,
  seconds: (performance.now() - startedAt) / 1000,
  protocol,
  secure,
}
process.stdout.write(`${JSON.stringify(done)}\n`)
await lines.next()
process.exit(0)
