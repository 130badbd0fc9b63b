import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createSecureServer } from "node:https"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import type { TLSSocket } from "node:tls"
import type { ApiClients } from "./ApiClients.ts"
import { ApiError, badRequest } from "./ApiStatus.ts"
import { representationOf } from "./ContentNegotiation.ts"
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  coreApiVersions,
  type ServerVersion,
  serverVersion,
} from "./Discovery.ts"
import { parseFieldSelector } from "./FieldSelector.ts"
import { type JsonValue, parseJson } from "./Json.ts"
import { parseLabelSelector } from "./LabelSelector.ts"
import { type ListBody, serveList } from "./ListRequest.ts"
import { createObject, type DeletionPolicy, deleteObject, patchObject, updateObject } from "./ObjectWrites.ts"
import type { OpenWatches } from "./OpenWatches.ts"
import { type DiscoveryRoute, type ResourceRoute, routeOf } from "./RequestRoute.ts"
import { allKinds, type ResourceKind } from "./ResourceKind.ts"
import type { ResourceStore, StoredObject } from "./ResourceStore.ts"
import { rejectUpgrade } from "./UpgradeRejection.ts"
import { asServed } from "./VersionConversion.ts"
import { serveWatch } from "./WatchStream.ts"

/** What the fault plan sees of a request before it is served. */
export interface ApiRequestFacts {
  /** The client that sent it, by its bearer token (`default` for the cluster's own kubeconfig). */
  readonly client: string
  readonly verb: string
  /** API group of the resource, empty for the core group. */
  readonly group: string
  readonly resource: string
  readonly subresource: string
  readonly namespace: string
  readonly name: string
}

/**
 * Decides, before serving, whether a request fails (injected 5xx, 429, 409 or 403) or is held unanswered
 * (`hang`) until its client gives up or the server closes; undefined lets it through.
 */
export type RequestGate = (facts: ApiRequestFacts) => ApiError | "hang" | undefined

/** The `pods/exec` subresource: takes over an upgrade request once the pod is known to exist. */
export interface ExecEndpoint {
  accept(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    pod: StoredObject,
    query: URLSearchParams,
    client: string,
  ): void
  close(): void
}

export interface ApiServerOptions {
  readonly store: ResourceStore
  readonly clients: ApiClients
  readonly openWatches: OpenWatches
  readonly bookmarkIntervalMs: number
  /** Server-side lifetime of a watch that did not ask for `timeoutSeconds`. */
  readonly defaultWatchTimeoutSeconds: () => number
  readonly gate: RequestGate
  readonly deletion: (kind: ResourceKind) => DeletionPolicy
  readonly exec: ExecEndpoint
  readonly now: () => Date
  /** The resources served, in discovery and in URLs; default the base ones (no `resource.k8s.io`). */
  readonly kinds?: ReadonlyArray<ResourceKind>
  /** What `GET /version` answers; default a 1.32 release. */
  readonly version?: ServerVersion
}

/** The serving certificate and key (PEM) of an HTTPS API server. */
export interface ServingIdentity {
  readonly certificate: string
  readonly key: string
}

export interface ApiServerStats {
  readonly requests: number
  readonly watchesOpen: number
  /** TLS handshakes completed, all of them (0 over plain HTTP). */
  readonly tlsHandshakes: number
  /** Of those, the ones that resumed an earlier session (a TLS 1.3 ticket or a session id) instead of a full handshake. */
  readonly tlsResumed: number
}

const listChunkBytes = 256 * 1024

/** Resolves when the response can take more data, or is gone. */
const drained = (response: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      response.off("drain", done)
      response.off("close", done)
      resolve()
    }
    if (response.destroyed) resolve()
    else {
      response.on("drain", done)
      response.on("close", done)
    }
  })

/** The largest request body accepted, as the Kubernetes API server limits it. */
const maxBodyBytes = 3 * 1024 * 1024

/**
 * A Kubernetes API server on loopback: discovery, list/watch/get/create/update/patch/delete for the
 * resources the service uses, and the WebSocket exec subresource.
 */
export class ApiServer {
  readonly url: string
  private readonly server: Server
  private readonly options: ApiServerOptions
  private requestCount = 0
  private tlsHandshakes = 0
  private tlsResumed = 0
  /** Requests and exec upgrades held unanswered by a `hang` fault, released when the server closes. */
  private readonly held = new Set<Duplex>()

  private constructor(server: Server, options: ApiServerOptions, scheme: "http" | "https") {
    this.server = server
    this.options = options
    const address = server.address() as AddressInfo
    this.url = `${scheme}://127.0.0.1:${address.port}`
  }

  /** Listens on 127.0.0.1: HTTPS with the given identity, as every real API server, or plain HTTP without one. */
  static async listen(options: ApiServerOptions, port: number, identity?: ServingIdentity): Promise<ApiServer> {
    const serverOptions = { keepAliveTimeout: 60_000, headersTimeout: 65_000, requestTimeout: 0 }
    const server: Server =
      identity === undefined
        ? createServer(serverOptions)
        : createSecureServer({ ...serverOptions, cert: identity.certificate, key: identity.key })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve()
      })
    })
    const api = new ApiServer(server, options, identity === undefined ? "http" : "https")
    server.on("secureConnection", (socket: TLSSocket) => api.handshakeDone(socket))
    server.on("request", (request, response) => api.handle(request, response))
    server.on("upgrade", (request, socket, head) => api.upgrade(request, socket, head))
    server.on("clientError", (_error, socket) => socket.destroy())
    return api
  }

  private get kinds(): ReadonlyArray<ResourceKind> {
    return this.options.kinds ?? allKinds
  }

  get stats(): ApiServerStats {
    return {
      requests: this.requestCount,
      watchesOpen: this.options.openWatches.size,
      tlsHandshakes: this.tlsHandshakes,
      tlsResumed: this.tlsResumed,
    }
  }

  private handshakeDone(socket: TLSSocket): void {
    this.tlsHandshakes++
    if (socket.isSessionReused()) this.tlsResumed++
  }

  async close(): Promise<void> {
    this.options.openWatches.drop()
    this.options.exec.close()
    for (const socket of this.held) socket.destroy()
    this.held.clear()
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeAllConnections()
    await closed
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    this.requestCount++
    this.serve(request, response).catch((error: unknown) => this.fail(response, error))
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    const route = routeOf(url.pathname, this.kinds)
    if (
      route !== undefined &&
      "discovery" in route &&
      (route.discovery === "health" || route.discovery === "version")
    ) {
      this.serveDiscovery(route, response)
      return
    }
    const client = this.options.clients.identify(request.headers.authorization)
    if (route === undefined) throw new ApiError(404, "NotFound", "the server could not find the requested resource")
    if ("discovery" in route) {
      this.serveDiscovery(route, response)
      return
    }
    const query = url.searchParams
    const verb = verbOf(request.method ?? "GET", route, query)
    const refusal = this.options.gate({
      client,
      verb,
      group: route.kind.group,
      resource: route.kind.resource,
      subresource: route.subresource,
      namespace: route.namespace,
      name: route.name,
    })
    if (refusal === "hang") {
      this.hold(request.socket)
      return
    }
    if (refusal !== undefined) throw refusal
    if (route.subresource === "exec") {
      const store = this.options.store
      store.require(route.kind, route.namespace, route.name)
      throw badRequest("Upgrade request required")
    }
    if (route.subresource !== "" && route.subresource !== "status")
      throw new ApiError(404, "NotFound", "the server could not find the requested resource")
    await this.serveResource(verb, route, request, response, query)
  }

  private async serveResource(
    verb: string,
    route: ResourceRoute,
    request: IncomingMessage,
    response: ServerResponse,
    query: URLSearchParams,
  ): Promise<void> {
    const { store } = this.options
    const representation = representationOf(request.headers.accept, query.get("includeObject"))
    if (query.has("dryRun")) throw badRequest("dryRun is not supported by this API server")
    switch (verb) {
      case "get": {
        const stored = store.require(route.kind, route.namespace, route.name)
        if (representation.table)
          await this.sendList(
            response,
            serveList(
              {
                kind: route.kind,
                namespace: route.namespace,
                labels: parseLabelSelector(""),
                fields: parseFieldSelector(`metadata.name=${stored.name}`, route.kind.fields),
                hasSelectors: true,
                resourceVersion: "",
                resourceVersionMatch: "",
                limit: 0,
                continueToken: "",
                representation,
              },
              store,
              this.options.now(),
            ),
          )
        else this.sendText(response, 200, asServed(route.kind, stored).bytes)
        return
      }
      case "list": {
        const labelSelector = query.get("labelSelector") ?? ""
        const fieldSelector = query.get("fieldSelector") ?? ""
        await this.sendList(
          response,
          serveList(
            {
              kind: route.kind,
              namespace: route.namespace,
              labels: parseLabelSelector(labelSelector),
              fields: parseFieldSelector(fieldSelector, route.kind.fields),
              hasSelectors: labelSelector !== "" || fieldSelector !== "",
              resourceVersion: query.get("resourceVersion") ?? "",
              resourceVersionMatch: query.get("resourceVersionMatch") ?? "",
              limit: nonNegativeInteger(query.get("limit"), "limit"),
              continueToken: query.get("continue") ?? "",
              representation,
            },
            store,
            this.options.now(),
          ),
        )
        return
      }
      case "watch": {
        const timeout = query.get("timeoutSeconds")
        serveWatch(
          {
            kind: route.kind,
            namespace: route.namespace,
            labels: parseLabelSelector(query.get("labelSelector")),
            fields: parseFieldSelector(query.get("fieldSelector"), route.kind.fields),
            resourceVersion: query.get("resourceVersion") ?? "",
            allowBookmarks: isTrue(query.get("allowWatchBookmarks")),
            sendInitialEvents: isTrue(query.get("sendInitialEvents")),
            timeoutSeconds:
              timeout === null
                ? this.options.defaultWatchTimeoutSeconds()
                : nonNegativeInteger(timeout, "timeoutSeconds"),
            representation,
          },
          response,
          {
            store,
            openWatches: this.options.openWatches,
            bookmarkIntervalMs: this.options.bookmarkIntervalMs,
            now: this.options.now,
          },
        )
        return
      }
      case "create": {
        const stored = createObject(store, route, await readBody(request))
        this.sendText(response, 201, stored.bytes)
        return
      }
      case "update": {
        const stored = updateObject(store, route, await readBody(request))
        this.sendText(response, 200, stored.bytes)
        return
      }
      case "patch": {
        const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim() ?? ""
        const stored = patchObject(store, route, contentType, await readBody(request))
        this.sendText(response, 200, stored.bytes)
        return
      }
      case "delete": {
        const body = await readOptionalBody(request)
        const result = deleteObject(
          store,
          route,
          body,
          query.get("gracePeriodSeconds"),
          this.options.deletion(route.kind),
        )
        this.sendText(response, 200, JSON.stringify(result))
        return
      }
      default:
        throw new ApiError(405, "MethodNotAllowed", `the server does not allow this method on the requested resource`)
    }
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.requestCount++
    // Node takes its error handler off a socket it hands over for an upgrade: a client resetting the
    // connection of a held or rejected upgrade would otherwise end the process.
    socket.on("error", () => socket.destroy())
    try {
      const url = new URL(request.url ?? "/", "http://127.0.0.1")
      const route = routeOf(url.pathname, this.kinds)
      if (route === undefined || "discovery" in route || route.subresource !== "exec")
        throw new ApiError(404, "NotFound", "the server could not find the requested resource")
      const client = this.options.clients.identify(request.headers.authorization)
      const refusal = this.options.gate({
        client,
        verb: "create",
        group: route.kind.group,
        resource: route.kind.resource,
        subresource: route.subresource,
        namespace: route.namespace,
        name: route.name,
      })
      if (refusal === "hang") {
        this.hold(socket)
        return
      }
      if (refusal !== undefined) throw refusal
      const pod = this.options.store.require(route.kind, route.namespace, route.name)
      this.options.exec.accept(request, socket, head, pod, url.searchParams, client)
    } catch (error) {
      rejectUpgrade(socket, error instanceof ApiError ? error : internalError(error))
    }
  }

  /** Leaves a request unanswered: only the client closing its connection, or the server closing, ends it. */
  private hold(socket: Duplex): void {
    this.held.add(socket)
    socket.once("close", () => this.held.delete(socket))
  }

  private serveDiscovery(route: DiscoveryRoute, response: ServerResponse): void {
    switch (route.discovery) {
      case "health":
        response.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache, private" })
        response.end("ok")
        return
      case "version":
        this.sendText(response, 200, JSON.stringify(this.options.version ?? serverVersion))
        return
      case "core-versions":
        this.sendText(response, 200, JSON.stringify(coreApiVersions(new URL(this.url).host)))
        return
      case "groups":
        this.sendText(response, 200, JSON.stringify(apiGroupList(this.kinds)))
        return
      case "group": {
        const group = apiGroup(route.group, this.kinds)
        if (group === undefined) throw new ApiError(404, "NotFound", "the server could not find the requested resource")
        this.sendText(response, 200, JSON.stringify(group))
        return
      }
      case "resources": {
        const list = apiResourceList(route.group, route.version, this.kinds)
        if (list === undefined) throw new ApiError(404, "NotFound", "the server could not find the requested resource")
        this.sendText(response, 200, JSON.stringify(list))
        return
      }
    }
  }

  /**
   * Streams a list in chunks of about 256 KiB, yielding to the event loop after each, so a list of ten
   * thousand pods does not stall concurrent watches and execs.
   */
  private async sendList(response: ServerResponse, body: ListBody): Promise<void> {
    response.writeHead(200, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Audit-Id": randomUUID(),
    })
    let pending: Buffer[] = []
    let pendingBytes = 0
    for (const part of body) {
      const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part
      pending.push(bytes)
      pendingBytes += bytes.length
      if (pendingBytes < listChunkBytes) continue
      const chunk = Buffer.concat(pending, pendingBytes)
      pending = []
      pendingBytes = 0
      if (!response.write(chunk)) await drained(response)
      // A loopback socket often drains synchronously; yield anyway so timers and other requests run.
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (response.destroyed) return
    }
    response.end(Buffer.concat(pending, pendingBytes))
  }

  private sendText(response: ServerResponse, code: number, body: string | Buffer): void {
    response.writeHead(code, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Audit-Id": randomUUID(),
      "Content-Length": Buffer.byteLength(body),
    })
    response.end(body)
  }

  private fail(response: ServerResponse, error: unknown): void {
    const apiError = error instanceof ApiError ? error : internalError(error)
    if (response.headersSent) {
      response.destroy()
      return
    }
    const body = JSON.stringify(apiError.toStatus())
    const headers: Record<string, string | number> = {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache, private",
      "Audit-Id": randomUUID(),
      "Content-Length": Buffer.byteLength(body),
    }
    if (apiError.details?.retryAfterSeconds !== undefined) headers["Retry-After"] = apiError.details.retryAfterSeconds
    response.writeHead(apiError.code, headers)
    response.end(body)
  }
}

const internalError = (error: unknown): ApiError =>
  new ApiError(
    500,
    "InternalError",
    `Internal error occurred: ${error instanceof Error ? error.message : String(error)}`,
  )

const verbOf = (method: string, route: ResourceRoute, query: URLSearchParams): string => {
  switch (method) {
    case "GET":
      if (route.name !== "") return "get"
      return isTrue(query.get("watch")) ? "watch" : "list"
    case "POST":
      return route.name === "" ? "create" : route.subresource === "exec" ? "create" : "unsupported"
    case "PUT":
      return route.name === "" ? "unsupported" : "update"
    case "PATCH":
      return route.name === "" ? "unsupported" : "patch"
    case "DELETE":
      return route.name === "" ? "unsupported" : "delete"
    default:
      return "unsupported"
  }
}

const isTrue = (value: string | null): boolean => value === "true" || value === "1"

const nonNegativeInteger = (value: string | null, name: string): number => {
  if (value === null || value === "") return 0
  const number = Number(value)
  if (!Number.isInteger(number) || number < 0) throw badRequest(`${name}: Invalid value: "${value}"`)
  return number
}

const readRaw = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > maxBodyBytes) throw new ApiError(413, "RequestEntityTooLarge", "the request body is too large")
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString("utf8")
}

const readBody = async (request: IncomingMessage): Promise<JsonValue> => {
  const text = await readRaw(request)
  try {
    return parseJson(text)
  } catch (error) {
    throw badRequest(`json: cannot decode request body: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const readOptionalBody = async (request: IncomingMessage): Promise<JsonValue | undefined> => {
  const text = await readRaw(request)
  if (text.trim() === "") return undefined
  try {
    return parseJson(text)
  } catch (error) {
    throw badRequest(`json: cannot decode request body: ${error instanceof Error ? error.message : String(error)}`)
  }
}
