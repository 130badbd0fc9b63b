import { createHash, timingSafeEqual } from "node:crypto"
import { readFile } from "node:fs/promises"
import type { IncomingMessage, ServerResponse } from "node:http"
import { basename, extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Fleet } from "./Fleet.ts"
import {
  type BadParameter,
  findEvents,
  findGpus,
  findNodes,
  gpuDetail,
  gpuItem,
  isBadParameter,
  nodeDetail,
  parseEventQuery,
  parseGpuQuery,
  parseHistoryLimit,
  parseNodeQuery,
} from "./FleetQuery.ts"

/** The page's Content-Security-Policy: nothing but the service itself, no inline script or style. */
export const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** Whether a path is the fleet page's or API's, for the server to hand it over. */
export const isFleetPath = (path: string): boolean =>
  path === "/" ||
  path === "/index.html" ||
  path.startsWith("/api/") ||
  path.startsWith("/assets/") ||
  /^\/(gpus|nodes)\/[^/]+$/.test(path)

/**
 * The built page's folder: `dist/fleet-page` of the package (built from `src/fleet/page/`), whether running
 * from the bundled command line (`dist/bin/chunks/`), from `tsc`'s `dist/src/` or from the sources: two
 * folders up is `dist/` in the first two, the package's root in the last. Its `index.html` is the shell;
 * `/assets/<name>` serves `<name>` from it.
 */
export const defaultPageDir = (): string => {
  const root = fileURLToPath(new URL("../../", import.meta.url))
  return basename(root) === "dist" ? join(root, "fleet-page") : join(root, "dist", "fleet-page")
}

const json = "application/json; charset=utf-8"

const securityHeaders = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const

const send = (
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Readonly<Record<string, string>>,
): void => {
  if (response.headersSent || response.writableEnded) return
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body
  response.writeHead(status, { ...securityHeaders, ...headers, "content-length": String(bytes.length) })
  response.end(request.method === "HEAD" ? undefined : bytes)
}

const sendError = (
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  error: string,
  message: string,
  extra: Readonly<Record<string, string>> = {},
  headers: Readonly<Record<string, string>> = {},
): void =>
  send(request, response, status, `${JSON.stringify({ error, message, ...extra })}\n`, {
    "content-type": json,
    "cache-control": "no-store",
    ...headers,
  })

const badParameter = (request: IncomingMessage, response: ServerResponse, problem: BadParameter): void =>
  sendError(request, response, 400, "bad-parameter", problem.message, { parameter: problem.parameter })

const etagOf = (bytes: Buffer | string): string =>
  `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`

const matchesEtag = (request: IncomingMessage, etag: string): boolean => {
  const header = request.headers["if-none-match"]
  if (header === undefined) return false
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === etag || tag === "*")
}

/** A JSON answer; `tagged` ones carry an ETag and answer 304 to a matching `If-None-Match`. */
const sendJson = (request: IncomingMessage, response: ServerResponse, body: unknown, tagged: boolean): void => {
  const text = `${JSON.stringify(body)}\n`
  if (!tagged) {
    send(request, response, 200, text, { "content-type": json, "cache-control": "no-store" })
    return
  }
  const etag = etagOf(text)
  const headers = { "content-type": json, "cache-control": "no-cache", etag }
  if (matchesEtag(request, etag)) {
    if (!response.headersSent) {
      response.writeHead(304, { ...securityHeaders, ...headers })
      response.end()
    }
    return
  }
  send(request, response, 200, text, headers)
}

const hashOf = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** Whether the request carries the token as a bearer token; compared in constant time. */
export const authorized = (request: IncomingMessage, token: string | undefined): boolean => {
  if (token === undefined || token === "") return true
  const header = request.headers.authorization ?? ""
  const match = /^Bearer\s+(.+)$/i.exec(header.trim())
  return match !== null && timingSafeEqual(hashOf(match[1] ?? ""), hashOf(token))
}

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": json,
  ".map": json,
}

interface PageFile {
  readonly bytes: Buffer
  readonly gzip: Buffer | undefined
  readonly etag: string
  readonly type: string
}

const compressible = (type: string): boolean => !type.startsWith("image/png") && !type.startsWith("image/x-icon")

/**
 * The fleet page and JSON API (docs/api.md) over the fleet's state: answers one request that
 * `isFleetPath` accepted. The shell and assets are public (they hold no data); every `/api` call needs the
 * token when one is set.
 */
export const fleetHandler = (fleet: Fleet["Service"], options: { readonly requestTimeout: Duration.Duration }) => {
  const { view } = fleet
  const pageDir = fleet.options.pageDir ?? defaultPageDir()
  const files = new Map<string, PageFile | undefined>()

  const pageFile = (name: string): Effect.Effect<PageFile | undefined> =>
    files.has(name)
      ? Effect.succeed(files.get(name))
      : Effect.tryPromise(() => readFile(join(pageDir, name))).pipe(
          Effect.map((bytes): PageFile => {
            const type = contentTypes[extname(name)] ?? "application/octet-stream"
            return {
              bytes,
              gzip: compressible(type) ? gzipSync(bytes) : undefined,
              etag: etagOf(bytes),
              type,
            }
          }),
          Effect.orElseSucceed(() => undefined),
          Effect.tap((file) =>
            Effect.sync(() => {
              files.set(name, file)
            }),
          ),
        )

  const answerFile =
    (request: IncomingMessage, response: ServerResponse, name: string, immutable: boolean) =>
    (file: PageFile | undefined): void => {
      if (file === undefined) {
        sendError(request, response, 404, "not-found", `${name} is not part of the built fleet page`)
        return
      }
      const headers: Record<string, string> = {
        "content-type": file.type,
        "cache-control": immutable ? "public, max-age=3600, must-revalidate" : "no-cache",
        etag: file.etag,
        vary: "accept-encoding",
        "content-security-policy": contentSecurityPolicy,
        "x-frame-options": "DENY",
      }
      if (matchesEtag(request, file.etag)) {
        if (!response.headersSent) {
          response.writeHead(304, { ...securityHeaders, ...headers })
          response.end()
        }
        return
      }
      const gzip = /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))
      if (gzip && file.gzip !== undefined) {
        send(request, response, 200, file.gzip, { ...headers, "content-encoding": "gzip" })
      } else send(request, response, 200, file.bytes, headers)
    }

  const servePage = (request: IncomingMessage, response: ServerResponse, name: string, immutable: boolean) =>
    pageFile(name).pipe(Effect.map(answerFile(request, response, name, immutable)))

  const history = (request: IncomingMessage, response: ServerResponse, uuid: string, params: URLSearchParams) =>
    Effect.gen(function* () {
      const max = view.historyPerGpu
      const durable = fleet.durableHistory()
      const limit = parseHistoryLimit(params, durable === undefined ? max : 1000)
      if (isBadParameter(limit)) return badParameter(request, response, limit)
      if (durable !== undefined) {
        const stored = yield* durable(uuid, limit).pipe(
          Effect.timeoutOption(options.requestTimeout),
          Effect.map(Option.getOrUndefined),
          Effect.orElseSucceed(() => undefined),
        )
        if (stored !== undefined && stored.length > 0) {
          return sendJson(request, response, { uuid, from: "postgres", complete: true, entries: stored }, false)
        }
      }
      const seen = view.history(uuid)
      if (seen === undefined && !view.gpus.has(uuid)) {
        return sendError(request, response, 404, "not-found", `no GPU with UUID ${uuid} is known`)
      }
      const entries = seen?.entries ?? []
      const complete = seen !== undefined && !seen.dropped && entries[entries.length - 1]?.event === "added"
      sendJson(
        request,
        response,
        {
          uuid,
          from: "process",
          complete,
          ...(complete
            ? {}
            : {
                note: `what this process saw since ${view.since.toISOString()}, at most ${max} entries per GPU; configure the postgres exporter for the whole history`,
              }),
          entries: entries.slice(0, limit),
        },
        false,
      )
    })

  const api = (request: IncomingMessage, response: ServerResponse, path: string, params: URLSearchParams) =>
    Effect.gen(function* () {
      if (!authorized(request, fleet.options.token)) {
        return sendError(
          request,
          response,
          401,
          "unauthorized",
          "this API needs the fleet token as Authorization: Bearer <token>",
          {},
          { "www-authenticate": 'Bearer realm="gpu-serials"' },
        )
      }
      const role = fleet.role()
      const segments = path.slice("/api/v1/".length).split("/").map(decodeURIComponent)
      const [collection, name, sub] = segments
      if (!path.startsWith("/api/v1/") || collection === undefined) {
        return sendError(request, response, 404, "not-found", `no API at ${path}`)
      }
      if (collection === "status" && segments.length === 1) {
        const known = new Set(params.keys())
        if (known.size > 0) return badParameter(request, response, notTaken([...known][0] ?? "", "status"))
        return sendJson(
          request,
          response,
          {
            cluster: fleet.options.cluster,
            ...(fleet.options.acrossClusters === true ? { acrossClusters: true } : {}),
            role: role.role,
            ...(role.leader === undefined ? {} : { leader: role.leader }),
            source: role.source,
            gpus: view.gpus.size,
            nodes: view.nodes().length,
            events: { capacity: view.eventCapacity },
            history: fleet.durableHistory() === undefined ? "process" : "postgres",
          },
          false,
        )
      }
      if (collection === "gpus" && segments.length === 1) {
        const query = parseGpuQuery(params)
        if (isBadParameter(query)) return badParameter(request, response, query)
        const page = findGpus(view, query)
        return sendJson(request, response, { ...page, items: page.items.map((entry) => gpuItem(view, entry)) }, true)
      }
      if (collection === "gpus" && name !== undefined && segments.length === 2) {
        const entry = view.gpus.get(name)
        if (entry === undefined)
          return sendError(request, response, 404, "not-found", `no GPU with UUID ${name} is known`)
        return sendJson(request, response, gpuDetail(view, entry), true)
      }
      if (collection === "gpus" && name !== undefined && sub === "history" && segments.length === 3) {
        return yield* history(request, response, name, params)
      }
      if (collection === "nodes" && segments.length === 1) {
        const query = parseNodeQuery(params)
        if (isBadParameter(query)) return badParameter(request, response, query)
        return sendJson(request, response, findNodes(view, query), true)
      }
      if (collection === "nodes" && name !== undefined && segments.length === 2) {
        const node = nodeDetail(view, name)
        if (node === undefined) return sendError(request, response, 404, "not-found", `no node named ${name} is known`)
        return sendJson(request, response, node, true)
      }
      if (collection === "events" && segments.length === 1) {
        const query = parseEventQuery(params, view.eventCapacity)
        if (isBadParameter(query)) return badParameter(request, response, query)
        return sendJson(request, response, { items: findEvents(view, query), capacity: view.eventCapacity }, true)
      }
      return sendError(request, response, 404, "not-found", `no API at ${path}`)
    })

  /** Answers one request for a fleet path; the server has checked the method is GET or HEAD. */
  return (request: IncomingMessage, response: ServerResponse, url: URL): Effect.Effect<void> => {
    const path = url.pathname
    if (path.startsWith("/api/")) {
      return Effect.suspend(() => api(request, response, path, url.searchParams)).pipe(
        Effect.catchDefect(() =>
          Effect.sync(() => {
            // A malformed percent-escape in the path is the only defect a request can cause.
            sendError(request, response, 400, "bad-parameter", "the path is not a valid URL path", {
              parameter: "path",
            })
          }),
        ),
      )
    }
    if (path.startsWith("/assets/")) {
      const name = path.slice("/assets/".length)
      if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) {
        return Effect.sync(() => sendError(request, response, 404, "not-found", `no asset ${name}`))
      }
      return servePage(request, response, name, true)
    }
    return servePage(request, response, "index.html", false)
  }
}

const notTaken = (parameter: string, endpoint: string): BadParameter => ({
  _tag: "BadParameter",
  parameter,
  message: `${parameter} is not a parameter of ${endpoint}; it takes none`,
})

/** The 405 answer to a method other than GET or HEAD on a fleet path. */
export const methodNotAllowed = (request: IncomingMessage, response: ServerResponse): void =>
  sendError(
    request,
    response,
    405,
    "method-not-allowed",
    "this path answers GET and HEAD only",
    {},
    { allow: "GET, HEAD" },
  )
