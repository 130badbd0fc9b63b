import type { IncomingMessage } from "node:http"
import type { Duplex } from "node:stream"
import { type WebSocket, WebSocketServer } from "ws"
import type { ExecEndpoint } from "../api/ApiServer.ts"
import { badRequest } from "../api/ApiStatus.ts"
import { isJsonObject, type JsonObject, type JsonValue } from "../api/Json.ts"
import type { StoredObject } from "../api/ResourceStore.ts"
import type { CommandResult, ContainerCommand, ContainerRuntime } from "../cluster/ContainerRuntime.ts"
import { ProcessOutput } from "../cluster/ProcessOutput.ts"
import {
  Channel,
  type ChannelProtocol,
  channelProtocols,
  exitStatus,
  frame,
  frameLayout,
  negotiate,
  runtimeFailureStatus,
  successStatus,
} from "./ChannelProtocol.ts"
import type { ExecLog } from "./ExecLog.ts"

interface Streams {
  readonly stdout: boolean
  readonly stderr: boolean
  readonly tty: boolean
}

/**
 * The `pods/exec` subresource over WebSocket (`v5.channel.k8s.io`, then `v4.channel.k8s.io`): validates
 * the pod and container the way the API server does, runs the command in the simulated container and
 * streams stdout/stderr frames, then the status frame with the exit code, then a normal close.
 */
export class PodExec implements ExecEndpoint {
  private readonly runtime: ContainerRuntime
  private readonly log: ExecLog
  private readonly now: () => Date
  private readonly server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (protocols) => negotiate([...protocols].join(",")) ?? false,
  })
  private readonly sessions = new Set<WebSocket>()

  constructor(runtime: ContainerRuntime, log: ExecLog, now: () => Date) {
    this.runtime = runtime
    this.log = log
    this.now = now
  }

  get openSessions(): number {
    return this.sessions.size
  }

  accept(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    pod: StoredObject,
    query: URLSearchParams,
    client: string,
  ): void {
    const container = containerOf(pod, query.get("container") ?? "")
    const argv = query.getAll("command")
    if (argv.length === 0) throw badRequest("you must specify at least 1 command")
    const nodeName = stringAt(pod.object, "spec", "nodeName")
    if (nodeName === "") throw badRequest(`pod ${pod.name} does not have a host assigned`)
    if (stringAt(pod.object, "status", "phase") !== "Running")
      throw badRequest(`unable to upgrade connection: container not found ("${container}")`)
    const protocol = negotiate(request.headers["sec-websocket-protocol"])
    if (protocol === undefined)
      throw badRequest(
        `unable to upgrade connection: requested protocol(s) are not supported: [${request.headers["sec-websocket-protocol"] ?? ""}]; supports [${channelProtocols.join(" ")}]`,
      )
    const streams: Streams = {
      stdout: isTrue(query.get("stdout")),
      stderr: isTrue(query.get("stderr")),
      tty: isTrue(query.get("tty")),
    }
    this.server.handleUpgrade(request, socket, head, (webSocket) => {
      const ended = this.log.open(client, pod.name, nodeName, this.now().getTime())
      webSocket.once("close", () => ended(this.now().getTime()))
      this.session(webSocket, protocol, { podName: pod.name, nodeName, container, argv }, streams)
    })
  }

  close(): void {
    for (const session of this.sessions) session.terminate()
    this.sessions.clear()
    this.server.close()
  }

  private session(webSocket: WebSocket, _protocol: ChannelProtocol, command: ContainerCommand, streams: Streams): void {
    this.sessions.add(webSocket)
    const abort = new AbortController()
    webSocket.on("close", () => {
      this.sessions.delete(webSocket)
      abort.abort()
    })
    webSocket.on("error", () => {
      this.sessions.delete(webSocket)
      abort.abort()
    })
    // stdin, resize and CLOSE frames are accepted and ignored: nvidia-smi reads no input.
    webSocket.on("message", () => {})
    if (streams.stdout) webSocket.send(frame(Channel.stdout, Buffer.alloc(0)))
    if (streams.stderr && !streams.tty) webSocket.send(frame(Channel.stderr, Buffer.alloc(0)))
    webSocket.send(frame(Channel.error, Buffer.alloc(0)))
    this.runtime.run(command, abort.signal).then(
      (result) => this.finish(webSocket, command, streams, result),
      (error: unknown) => {
        if (abort.signal.aborted) return
        this.finish(webSocket, command, streams, {
          kind: "not-started",
          message: error instanceof Error ? error.message : String(error),
        })
      },
    )
  }

  private finish(webSocket: WebSocket, command: ContainerCommand, streams: Streams, result: CommandResult): void {
    if (webSocket.readyState !== webSocket.OPEN || result.kind === "hung") return
    if (result.kind === "not-started") {
      webSocket.send(frame(Channel.error, runtimeFailureStatus(result.message)))
      webSocket.close(1000)
      return
    }
    const stdout = streams.tty ? ttyOutput(result.stdout, result.stderr) : result.stdout
    if (streams.stdout) sendFrames(webSocket, Channel.stdout, stdout)
    if (streams.stderr && !streams.tty) sendFrames(webSocket, Channel.stderr, result.stderr)
    webSocket.send(
      frame(Channel.error, result.exitCode === 0 ? successStatus() : exitStatus(command.argv, result.exitCode)),
    )
    webSocket.close(1000)
  }
}

/** Sends output blocks as frames: each block already has the byte in front where its channel goes. */
const sendFrames = (webSocket: WebSocket, channel: number, output: ProcessOutput): void => {
  for (const block of output.blocks()) {
    block[0] = channel
    webSocket.send(block)
  }
}

/** A terminal merges stderr into stdout and turns line feeds into CR LF. */
const ttyOutput = (stdout: ProcessOutput, stderr: ProcessOutput): ProcessOutput =>
  ProcessOutput.of(`${stdout.toString()}${stderr.toString()}`.replaceAll("\n", "\r\n"), frameLayout)

/** The container an exec targets, chosen and checked the way the API server's pod strategy does. */
const containerOf = (pod: StoredObject, requested: string): string => {
  const spec = isJsonObject(pod.object.spec) ? pod.object.spec : {}
  const names = (kind: "containers" | "initContainers" | "ephemeralContainers") => {
    const list = spec[kind]
    return Array.isArray(list)
      ? list.flatMap((container) =>
          isJsonObject(container) && typeof container.name === "string" ? [container.name] : [],
        )
      : []
  }
  const containers = names("containers")
  if (requested === "") {
    if (containers.length === 1) return containers[0] as string
    const initContainers = names("initContainers")
    let message = `a container name must be specified for pod ${pod.name}, choose one of: [${containers.join(" ")}]`
    if (initContainers.length > 0) message += ` or one of the init containers: [${initContainers.join(" ")}]`
    throw badRequest(message)
  }
  if (![...containers, ...names("initContainers"), ...names("ephemeralContainers")].includes(requested))
    throw badRequest(`container ${requested} is not valid for pod ${pod.name}`)
  return requested
}

const stringAt = (object: JsonObject, ...path: string[]): string => {
  let cursor: JsonValue | undefined = object
  for (const segment of path) cursor = isJsonObject(cursor) ? cursor[segment] : undefined
  return typeof cursor === "string" ? cursor : ""
}

const isTrue = (value: string | null): boolean => value === "true" || value === "1"
