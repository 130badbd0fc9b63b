import type { ServerResponse } from "node:http"
import { ApiError } from "./ApiStatus.ts"
import { resetConnection } from "./ConnectionReset.ts"
import type { Representation } from "./ContentNegotiation.ts"
import type { FieldSelector } from "./FieldSelector.ts"
import type { LabelSelector } from "./LabelSelector.ts"
import type { OpenWatches } from "./OpenWatches.ts"
import { apiVersionOf, type ResourceKind } from "./ResourceKind.ts"
import type { ResourceStore, StoredObject, StoreEvent } from "./ResourceStore.ts"
import { renderTable } from "./TableView.ts"
import { asServed } from "./VersionConversion.ts"

export interface WatchRequest {
  readonly kind: ResourceKind
  readonly namespace: string
  readonly labels: LabelSelector
  readonly fields: FieldSelector
  /** The `resourceVersion` parameter as sent: empty, `0`, or a revision to resume after. */
  readonly resourceVersion: string
  readonly allowBookmarks: boolean
  readonly sendInitialEvents: boolean
  readonly timeoutSeconds: number
  readonly representation: Representation
}

export interface WatchEnvironment {
  readonly store: ResourceStore
  readonly openWatches: OpenWatches
  readonly bookmarkIntervalMs: number
  readonly now: () => Date
}

/** A slow consumer whose unsent events pass this many bytes is cut off, as the API server does. */
const maxBufferedBytes = 64 * 1024 * 1024

type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"

/**
 * Serves one watch: replays what happened after the requested resourceVersion (or the current state as
 * ADDED events), then streams each commit, with BOOKMARKs when asked and a clean end at `timeoutSeconds`.
 * A resourceVersion older than the kept history gets an ERROR event carrying a 410 Status, then the end.
 */
export const serveWatch = (request: WatchRequest, response: ServerResponse, environment: WatchEnvironment): void => {
  const { store, openWatches } = environment
  const { kind } = request
  const prefix = kind.namespaced && request.namespace !== "" ? `${request.namespace}/` : undefined
  const selected = (stored: StoredObject) =>
    (prefix === undefined || stored.key.startsWith(prefix)) &&
    request.labels.matches(stored.labels) &&
    request.fields.matches(stored.object)
  let headersSent = false

  response.writeHead(200, {
    "Content-Type": request.representation.table ? "application/json;as=Table;v=v1;g=meta.k8s.io" : "application/json",
    "Cache-Control": "no-cache, private",
    "Transfer-Encoding": "chunked",
  })
  response.flushHeaders()

  const write = (type: WatchEventType, objectJson: string) => {
    if (response.destroyed || response.writableEnded) return
    response.write(`{"type":"${type}","object":${objectJson}}\n`)
    if (response.writableLength > maxBufferedBytes) response.destroy()
  }

  const objectJson = (original: StoredObject, resourceVersion: number): string => {
    const stored = asServed(kind, original)
    if (request.representation.table) {
      const table = renderTable(
        kind,
        [stored],
        { resourceVersion: String(resourceVersion) },
        { includeObject: request.representation.includeObject, withHeaders: !headersSent },
        environment.now(),
      )
      headersSent = true
      return table
    }
    return stored.json
  }

  const deliver = (event: StoreEvent) => {
    const now = selected(event.current)
    const before = event.previous !== undefined && selected(event.previous)
    if (event.type === "ADDED") {
      if (now) write("ADDED", objectJson(event.current, event.resourceVersion))
    } else if (event.type === "DELETED") {
      if (before || now) write("DELETED", objectJson(event.current, event.resourceVersion))
    } else if (now && before) write("MODIFIED", objectJson(event.current, event.resourceVersion))
    else if (now) write("ADDED", objectJson(event.current, event.resourceVersion))
    else if (before && event.previous !== undefined)
      write("DELETED", objectJson(withRevision(event.previous, event.resourceVersion), event.resourceVersion))
  }

  const bookmark = (annotations?: Record<string, string>) => {
    const metadata: Record<string, unknown> = { resourceVersion: String(store.currentRevision) }
    if (annotations !== undefined) metadata.annotations = annotations
    write("BOOKMARK", JSON.stringify({ kind: kind.kind, apiVersion: apiVersionOf(kind), metadata }))
  }

  let unsubscribe: () => void = () => {}
  let bookmarkTimer: NodeJS.Timeout | undefined
  let timeoutTimer: NodeJS.Timeout | undefined
  let unregister: () => void = () => {}
  const stopStreaming = () => {
    unsubscribe()
    unsubscribe = () => {}
    if (bookmarkTimer !== undefined) clearInterval(bookmarkTimer)
    bookmarkTimer = undefined
  }
  const finish = () => {
    stopStreaming()
    if (timeoutTimer !== undefined) clearTimeout(timeoutTimer)
    timeoutTimer = undefined
    unregister()
  }
  response.on("close", finish)

  const initial = request.sendInitialEvents || request.resourceVersion === "" || request.resourceVersion === "0"
  if (initial) {
    for (const stored of store.list(kind, request.namespace))
      if (selected(stored)) write("ADDED", objectJson(stored, stored.resourceVersion))
    if (request.sendInitialEvents && request.allowBookmarks) bookmark({ "k8s.io/initial-events-end": "true" })
  } else {
    const revision = Number(request.resourceVersion)
    let replay: StoreEvent[]
    try {
      if (!Number.isInteger(revision) || revision < 0)
        throw new ApiError(400, "BadRequest", `resourceVersion: Invalid value: "${request.resourceVersion}"`)
      replay = store.eventsSince(kind, revision)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      write("ERROR", JSON.stringify(error.toStatus()))
      response.end()
      return
    }
    for (const event of replay) deliver(event)
  }

  unsubscribe = store.subscribe(kind, deliver)
  if (request.allowBookmarks && environment.bookmarkIntervalMs > 0)
    bookmarkTimer = setInterval(() => bookmark(), environment.bookmarkIntervalMs)
  timeoutTimer = setTimeout(() => {
    stopStreaming()
    response.end()
  }, request.timeoutSeconds * 1000)
  unregister = openWatches.add({
    resource: kind.resource,
    drop: () => {
      finish()
      if (response.socket !== null) resetConnection(response.socket)
      response.destroy()
    },
    stall: () => stopStreaming(),
  })
}

/** The state an object had before an event, stamped with the event's revision (a selector-exit DELETED). */
const withRevision = (stored: StoredObject, resourceVersion: number): StoredObject => {
  const object = structuredClone(stored.object)
  const metadata = object.metadata
  if (typeof metadata === "object" && metadata !== null && !Array.isArray(metadata))
    metadata.resourceVersion = String(resourceVersion)
  const json = JSON.stringify(object)
  return { ...stored, resourceVersion, object, json, bytes: Buffer.from(json, "utf8") }
}
