import type { GpuRecord } from "../domain/GpuRecord.ts"
import { inventoryEventKinds } from "../domain/InventoryEventKind.ts"
import { chassisOf, type KnownGpu } from "../domain/KnownGpu.ts"
import { machineIdentity } from "../domain/ProviderId.ts"
import { type FleetGpu, type FleetView, uuidKey, uuidKeyStartsWith } from "./FleetView.ts"

/** A request parameter the API cannot take: answered 400 `bad-parameter` naming it. */
export interface BadParameter {
  readonly _tag: "BadParameter"
  readonly parameter: string
  readonly message: string
}

const bad = (parameter: string, message: string): BadParameter => ({ _tag: "BadParameter", parameter, message })

export const isBadParameter = (value: unknown): value is BadParameter =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "BadParameter"

export const healthFilters = ["ok", "degraded", "failed", "unknown"] as const
export type HealthFilter = (typeof healthFilters)[number]

export interface GpuQuery {
  readonly q?: string
  readonly serial?: string
  readonly uuid?: string
  readonly node?: string
  readonly chassis?: string
  readonly model?: string
  /** The GPUs of this cluster only (on a hub; a cluster's own view holds its cluster's alone). */
  readonly cluster?: string
  readonly health?: ReadonlySet<HealthFilter>
  readonly limit: number
  readonly cursor?: string
}

export interface NodeQuery {
  readonly q?: string
  readonly failing: boolean
  readonly limit: number
  readonly cursor?: string
}

export interface EventQuery {
  readonly kinds?: ReadonlySet<string>
  readonly since?: number
  readonly limit: number
}

export const defaultLimit = 100
export const maxLimit = 1000

/** Rejects parameters the endpoint does not know, so a typo is not silently ignored. */
const known = (params: URLSearchParams, names: ReadonlyArray<string>): BadParameter | undefined => {
  for (const name of params.keys()) {
    if (!names.includes(name))
      return bad(name, `${name} is not a parameter of this endpoint; it takes ${names.join(", ")}`)
  }
  for (const name of names) {
    if (params.getAll(name).length > 1) return bad(name, `${name} may be given once`)
  }
  return undefined
}

const text = (params: URLSearchParams, name: string): string | undefined => {
  const value = params.get(name)?.trim()
  return value === undefined || value === "" ? undefined : value
}

const limitOf = (params: URLSearchParams, max: number, fallback: number): number | BadParameter => {
  const value = params.get("limit")
  if (value === null || value === "") return fallback
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    return bad("limit", `limit must be a whole number from 1 to ${max}`)
  }
  return Number(value)
}

const cursorOf = (params: URLSearchParams): string | undefined | BadParameter => {
  const value = params.get("cursor")
  if (value === null || value === "") return undefined
  const decoded = decodeCursor(value)
  return decoded === undefined ? bad("cursor", "cursor must be the nextCursor of a previous answer") : decoded
}

/** An opaque cursor: the sort key of the last item of a page. */
export const encodeCursor = (key: string): string => Buffer.from(key, "utf8").toString("base64url")

const decodeCursor = (cursor: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(cursor)) return undefined
  const key = Buffer.from(cursor, "base64url").toString("utf8")
  return key === "" || key.includes("\ufffd") ? undefined : key
}

const booleanOf = (params: URLSearchParams, name: string): boolean | BadParameter => {
  const value = params.get(name)
  if (value === null || value === "" || value === "false") return false
  if (value === "true") return true
  return bad(name, `${name} must be true or false`)
}

export const parseGpuQuery = (params: URLSearchParams): GpuQuery | BadParameter => {
  const unknown = known(params, [
    "q",
    "serial",
    "uuid",
    "node",
    "chassis",
    "model",
    "cluster",
    "health",
    "limit",
    "cursor",
  ])
  if (unknown !== undefined) return unknown
  const cluster = text(params, "cluster")
  if (cluster !== undefined && !clusterName.test(cluster)) {
    return bad("cluster", "cluster must be a cluster's name (letters, digits, '_', '-')")
  }
  const limit = limitOf(params, maxLimit, defaultLimit)
  if (isBadParameter(limit)) return limit
  const cursor = cursorOf(params)
  if (isBadParameter(cursor)) return cursor
  let health: Set<HealthFilter> | undefined
  const healthText = text(params, "health")
  if (healthText !== undefined) {
    health = new Set()
    for (const state of healthText.split(",").map((part) => part.trim().toLowerCase())) {
      if (!(healthFilters as ReadonlyArray<string>).includes(state)) {
        return bad("health", `health must be a comma list of ${healthFilters.join(", ")}`)
      }
      health.add(state as HealthFilter)
    }
  }
  const fields = Object.fromEntries(
    (["q", "serial", "uuid", "node", "chassis", "model"] as const).flatMap((name) => {
      const value = text(params, name)
      return value === undefined ? [] : [[name, value]]
    }),
  )
  return {
    ...fields,
    ...(cluster === undefined ? {} : { cluster }),
    ...(health === undefined ? {} : { health }),
    limit,
    ...(cursor === undefined ? {} : { cursor }),
  }
}

/** A cluster's name as records carry it and a hub sources it: a JetStream domain. */
const clusterName = /^[A-Za-z0-9_-]{1,255}$/

export const parseNodeQuery = (params: URLSearchParams): NodeQuery | BadParameter => {
  const unknown = known(params, ["q", "failing", "limit", "cursor"])
  if (unknown !== undefined) return unknown
  const limit = limitOf(params, maxLimit, defaultLimit)
  if (isBadParameter(limit)) return limit
  const cursor = cursorOf(params)
  if (isBadParameter(cursor)) return cursor
  const failing = booleanOf(params, "failing")
  if (isBadParameter(failing)) return failing
  const q = text(params, "q")
  return { ...(q === undefined ? {} : { q }), failing, limit, ...(cursor === undefined ? {} : { cursor }) }
}

export const parseEventQuery = (params: URLSearchParams, capacity: number): EventQuery | BadParameter => {
  const unknown = known(params, ["kind", "since", "limit"])
  if (unknown !== undefined) return unknown
  const limit = limitOf(params, Math.max(1, capacity), Math.max(1, Math.min(defaultLimit, capacity)))
  if (isBadParameter(limit)) return limit
  let kinds: Set<string> | undefined
  const kindText = text(params, "kind")
  if (kindText !== undefined) {
    kinds = new Set()
    for (const kind of kindText.split(",").map((part) => part.trim().toLowerCase())) {
      if (!(inventoryEventKinds as ReadonlyArray<string>).includes(kind)) {
        return bad("kind", `kind must be a comma list of ${inventoryEventKinds.join(", ")}`)
      }
      kinds.add(kind)
    }
  }
  let since: number | undefined
  const sinceText = text(params, "since")
  if (sinceText !== undefined) {
    since = rfc3339.test(sinceText) ? Date.parse(sinceText) : Number.NaN
    if (Number.isNaN(since)) return bad("since", "since must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
  }
  return { ...(kinds === undefined ? {} : { kinds }), ...(since === undefined ? {} : { since }), limit }
}

export const parseHistoryLimit = (params: URLSearchParams, max: number): number | BadParameter => {
  const unknown = known(params, ["limit"])
  if (unknown !== undefined) return unknown
  return limitOf(params, max, max)
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

/** The API's item for one GPU. */
export const gpuItem = (view: FleetView, entry: FleetGpu) => {
  const { known, since } = entry
  const { gpu } = known
  return {
    uuid: known.uuid,
    gpu: gpu.serial ?? "",
    cluster: view.clusterOf(entry),
    node: known.node,
    machine: known.machine,
    chassis: chassisOf(known),
    ...(gpu.product === undefined ? {} : { product: gpu.product }),
    ...(gpu.pciBusId === undefined ? {} : { pciBusId: gpu.pciBusId }),
    ...(gpu.moduleId === undefined ? {} : { moduleId: gpu.moduleId }),
    index: gpu.index,
    ...(gpu.migMode === undefined ? {} : { migMode: gpu.migMode }),
    ...(known.driverVersion === undefined ? {} : { driverVersion: known.driverVersion }),
    ...(known.health === undefined ? {} : { health: known.health }),
    lastSeen: known.lastSeen.toISOString(),
    since: since.toISOString(),
  }
}

/** The API's answer for one GPU: its item and the rest of what the inventory knows of it. */
export const gpuDetail = (view: FleetView, entry: FleetGpu) => {
  const { known } = entry
  return {
    ...gpuItem(view, entry),
    ...(known.cudaVersion === undefined ? {} : { cudaVersion: known.cudaVersion }),
    ...(known.providerId === undefined ? {} : { providerId: known.providerId }),
    source: known.pod.namespace === "" ? known.pod.name : `${known.pod.namespace}/${known.pod.name}`,
    serialShared: known.serialShared,
    ...(known.gpu.migDevices === undefined ? {} : { migDevices: known.gpu.migDevices }),
  }
}

const healthOf = (known: KnownGpu): HealthFilter => known.health?.state ?? "unknown"

const startsWithGpu = (q: string): boolean => "gpu-".startsWith(q) || q.startsWith("gpu-")

/** Whether `q` (lower case) is a prefix of every UUID: `g`, `gp`, `gpu`, `gpu-`. */
const everyUuid = (q: string): boolean => q.length <= 4 && "gpu-".startsWith(q)

/** The UUIDs a `q` prefix matches: a prefix of the serial, UUID (with or without `GPU-`), node or chassis. */
const qCandidates = (view: FleetView, q: string): Set<string> | "all" => {
  if (everyUuid(q)) return "all"
  const uuidPrefix = startsWithGpu(q) ? q.slice(4) : q
  const wide =
    view.bySerial.countPrefix(q) +
    view.byNode.countPrefix(q) +
    view.byChassis.countPrefix(q) +
    view.byUuid.countPrefix(uuidPrefix)
  // A wide prefix: testing each GPU on the walk costs less than collecting the matches first.
  if (wide * 16 > view.gpus.size) return "all"
  const matched = new Set<string>()
  const add = (ids: ReadonlyArray<string>) => {
    for (const id of ids) matched.add(id)
  }
  add(view.bySerial.prefix(q))
  add(view.byNode.prefix(q))
  add(view.byChassis.prefix(q))
  add(view.byUuid.prefix(uuidPrefix))
  return matched
}

type Test = (entry: FleetGpu) => boolean

/** The tests of a query's filters, less the one its candidates were found by. */
const testsOf = (view: FleetView, query: GpuQuery, by: keyof GpuQuery | undefined): ReadonlyArray<Test> => {
  const tests: Array<Test> = []
  const q = query.q?.toLowerCase()
  if (q !== undefined && by !== "q" && !everyUuid(q)) {
    const uuidPrefix = startsWithGpu(q) ? q.slice(4) : q
    tests.push(
      (entry) =>
        entry.serialKey.startsWith(q) ||
        entry.nodeKey.startsWith(q) ||
        entry.chassisKey.startsWith(q) ||
        uuidKeyStartsWith(entry.known.uuid, uuidPrefix),
    )
  }
  const exact = (name: "serial" | "node" | "chassis", field: "serialKey" | "nodeKey" | "chassisKey") => {
    const value = query[name]?.toLowerCase()
    if (value !== undefined && by !== name) tests.push((entry) => entry[field] === value)
  }
  exact("serial", "serialKey")
  exact("node", "nodeKey")
  exact("chassis", "chassisKey")
  if (query.uuid !== undefined && by !== "uuid") {
    const key = uuidKey(query.uuid)
    tests.push((entry) => uuidKey(entry.known.uuid) === key)
  }
  const model = query.model?.toLowerCase()
  if (model !== undefined) tests.push((entry) => entry.productKey.includes(model))
  const cluster = query.cluster
  if (cluster !== undefined) tests.push((entry) => view.clusterOf(entry) === cluster)
  const health = query.health
  if (health !== undefined) tests.push((entry) => health.has(healthOf(entry.known)))
  return tests
}

export interface Page<T> {
  readonly items: ReadonlyArray<T>
  readonly total: number
  readonly nextCursor?: string
}

/** The GPUs a query matches, in order (node, index, UUID), one page after its cursor. */
export const findGpus = (view: FleetView, query: GpuQuery): Page<FleetGpu> => {
  const q = query.q?.toLowerCase()
  // The narrowest index names the candidates; the other filters then judge each.
  let candidates: ReadonlyArray<string> | Set<string> | "all" = "all"
  let by: keyof GpuQuery | undefined
  if (query.uuid !== undefined) [candidates, by] = [view.byUuid.exact(uuidKey(query.uuid)), "uuid"]
  else if (query.serial !== undefined) [candidates, by] = [view.bySerial.exact(query.serial.toLowerCase()), "serial"]
  else if (query.node !== undefined) [candidates, by] = [view.byNode.exact(query.node.toLowerCase()), "node"]
  else if (query.chassis !== undefined)
    [candidates, by] = [view.byChassis.exact(query.chassis.toLowerCase()), "chassis"]
  else if (q !== undefined) {
    candidates = qCandidates(view, q)
    // Candidates "all" for a wide prefix leave the prefix to its test.
    by = candidates === "all" && !everyUuid(q) ? undefined : "q"
  }
  const tests = testsOf(view, query, by)
  const passes = (entry: FleetGpu): boolean => {
    for (const test of tests) if (!test(entry)) return false
    return true
  }

  if (candidates === "all" && tests.length === 0) {
    // The whole fleet in order: the page is read off the order index.
    const order = view.order.all()
    const from = query.cursor === undefined ? 0 : view.order.lowerBound(query.cursor, "\uffff")
    const items = order.slice(from, from + query.limit).flatMap((uuid) => {
      const entry = view.gpus.get(uuid)
      return entry === undefined ? [] : [entry]
    })
    const last = items[items.length - 1]
    return {
      items,
      total: order.length,
      ...(from + items.length < order.length && last !== undefined
        ? { nextCursor: encodeCursor(view.orderKeyOf(last)) }
        : {}),
    }
  }

  const matched: Array<FleetGpu> = []
  const size = candidates === "all" ? view.gpus.size : candidates instanceof Set ? candidates.size : candidates.length
  if (candidates === "all" || size * 16 > view.gpus.size) {
    // Many candidates: walking the order once beats sorting them.
    const inSet = candidates === "all" ? undefined : candidates instanceof Set ? candidates : new Set(candidates)
    for (const entry of view.orderedGpus()) {
      if (inSet !== undefined && !inSet.has(entry.known.uuid)) continue
      if (passes(entry)) matched.push(entry)
    }
  } else {
    for (const uuid of candidates) {
      const entry = view.gpus.get(uuid)
      if (entry !== undefined && passes(entry)) matched.push(entry)
    }
    matched.sort((a, b) => view.compareOrder(a, b))
  }
  return pageOf(matched, (entry) => view.orderKeyOf(entry), query)
}

/** One page of sorted `items` after the cursor's key. */
const pageOf = <T>(
  items: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  query: { readonly limit: number; readonly cursor?: string },
): Page<T> => {
  let from = 0
  if (query.cursor !== undefined) {
    const after = query.cursor
    let low = 0
    let high = items.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (keyOf(items[middle] as T) <= after) low = middle + 1
      else high = middle
    }
    from = low
  }
  const page = items.slice(from, from + query.limit)
  const last = page[page.length - 1]
  return {
    items: page,
    total: items.length,
    ...(from + page.length < items.length && last !== undefined ? { nextCursor: encodeCursor(keyOf(last)) } : {}),
  }
}

/** The API's item for one node. */
export const nodeItem = (view: FleetView, name: string) => {
  const uuids = view.nodeGpus.get(name)
  const reading = view.readings.get(name)
  const health = { ok: 0, degraded: 0, failed: 0, unknown: 0 }
  const chassis = new Set<string>()
  let machine: string | undefined
  for (const uuid of uuids ?? []) {
    const known = view.gpus.get(uuid)?.known
    if (known === undefined) continue
    health[healthOf(known)]++
    const tray = chassisOf(known)
    if (tray !== "") chassis.add(tray)
    machine ??= known.machine
  }
  machine ??= machineIdentity(reading?.providerId).machine
  const first = uuids === undefined ? undefined : view.gpus.get(uuids[0] ?? "")
  return {
    name,
    ...(first === undefined ? {} : { cluster: view.clusterOf(first) }),
    machine,
    gpus: uuids?.length ?? 0,
    health,
    chassis: [...chassis].sort(),
    ...(reading === undefined
      ? {}
      : {
          lastReading: {
            time: reading.time.toISOString(),
            result: reading.result,
            ...(reading.failure === undefined ? {} : { failureKind: reading.failure.kind }),
          },
        }),
  }
}

/** The nodes a query matches, by name, one page after its cursor. */
export const findNodes = (view: FleetView, query: NodeQuery): Page<ReturnType<typeof nodeItem>> => {
  const q = query.q?.toLowerCase()
  const names = view
    .nodes()
    .filter(
      (name) =>
        (q === undefined || name.toLowerCase().startsWith(q)) &&
        (!query.failing || view.readings.get(name)?.result === "failed"),
    )
  const page = pageOf(names, (name) => name, query)
  return { ...page, items: page.items.map((name) => nodeItem(view, name)) }
}

/** One node with its GPUs by index, or undefined when unknown. */
export const nodeDetail = (view: FleetView, name: string) => {
  const uuids = view.nodeGpus.get(name)
  const reading = view.readings.get(name)
  if (uuids === undefined && reading === undefined) return undefined
  const gpus = [...(uuids ?? [])]
    .flatMap((uuid) => {
      const entry = view.gpus.get(uuid)
      return entry === undefined ? [] : [entry]
    })
    .sort((a, b) => view.compareOrder(a, b))
  const providerId = reading?.providerId ?? gpus[0]?.known.providerId
  return {
    ...nodeItem(view, name),
    ...(providerId === undefined ? {} : { providerId }),
    ...(reading?.failure === undefined ? {} : { failure: reading.failure }),
    gpus: gpus.map((entry) => gpuItem(view, entry)),
  }
}

/** The ring's events a query matches, newest first. */
export const findEvents = (view: FleetView, query: EventQuery): ReadonlyArray<GpuRecord> => {
  const found: Array<GpuRecord> = []
  for (const record of view.recentEvents()) {
    if (found.length >= query.limit) break
    if (query.since !== undefined && Date.parse(record.time) < query.since) continue
    if (query.kinds !== undefined && !query.kinds.has(record.event)) continue
    found.push(record)
  }
  return found
}
