import { isJsonObject, type JsonArray, type JsonObject, type JsonValue } from "./Json.ts"
import type { ResourceKind } from "./ResourceKind.ts"
import type { StoredObject } from "./ResourceStore.ts"

/** A column of a `meta.k8s.io/v1` Table, as `kubectl get` prints it. */
interface Column {
  readonly name: string
  readonly type: "string" | "integer" | "date"
  readonly format: string
  readonly description: string
  readonly priority: 0 | 1
  readonly cell: (object: JsonObject, now: Date) => JsonValue
}

const nameColumn: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description:
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.",
  priority: 0,
  cell: (object) => text(object, "metadata", "name"),
}

const ageColumn: Column = {
  name: "Age",
  type: "string",
  format: "",
  description:
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.",
  priority: 0,
  cell: (object, now) => humanAge(text(object, "metadata", "creationTimestamp"), now),
}

const podColumns: ReadonlyArray<Column> = [
  nameColumn,
  {
    name: "Ready",
    type: "string",
    format: "",
    description: "The aggregate readiness state of this pod for accepting traffic.",
    priority: 0,
    cell: (object) => {
      const statuses = containerStatuses(object)
      const total = array(object, "spec", "containers").length
      return `${statuses.filter((status) => status.ready === true).length}/${total}`
    },
  },
  {
    name: "Status",
    type: "string",
    format: "",
    description: "The aggregate status of the containers in this pod.",
    priority: 0,
    cell: (object) => podStatusReason(object),
  },
  {
    name: "Restarts",
    type: "string",
    format: "",
    description:
      "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    priority: 0,
    cell: (object) =>
      String(
        containerStatuses(object).reduce(
          (sum, status) => sum + (typeof status.restartCount === "number" ? status.restartCount : 0),
          0,
        ),
      ),
  },
  ageColumn,
  {
    name: "IP",
    type: "string",
    format: "",
    description: "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    priority: 1,
    cell: (object) => text(object, "status", "podIP") || "<none>",
  },
  {
    name: "Node",
    type: "string",
    format: "",
    description:
      "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.",
    priority: 1,
    cell: (object) => text(object, "spec", "nodeName") || "<none>",
  },
  {
    name: "Nominated Node",
    type: "string",
    format: "",
    description:
      "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.",
    priority: 1,
    cell: (object) => text(object, "status", "nominatedNodeName") || "<none>",
  },
  {
    name: "Readiness Gates",
    type: "string",
    format: "",
    description: "If specified, all readiness gates will be evaluated for pod readiness.",
    priority: 1,
    cell: () => "<none>",
  },
]

const nodeColumns: ReadonlyArray<Column> = [
  nameColumn,
  {
    name: "Status",
    type: "string",
    format: "",
    description: "The status of the node",
    priority: 0,
    cell: (object) => {
      const ready = array(object, "status", "conditions").find(
        (condition) => isJsonObject(condition) && condition.type === "Ready",
      )
      const state = isJsonObject(ready) && ready.status === "True" ? "Ready" : "NotReady"
      return object.spec !== undefined && isJsonObject(object.spec) && object.spec.unschedulable === true
        ? `${state},SchedulingDisabled`
        : state
    },
  },
  {
    name: "Roles",
    type: "string",
    format: "",
    description: "The roles of the node",
    priority: 0,
    cell: (object) => {
      const labels = object.metadata !== undefined && isJsonObject(object.metadata) ? object.metadata.labels : undefined
      const roles = isJsonObject(labels)
        ? Object.keys(labels)
            .filter((key) => key.startsWith("node-role.kubernetes.io/"))
            .map((key) => key.slice("node-role.kubernetes.io/".length))
        : []
      return roles.length === 0 ? "<none>" : roles.sort().join(",")
    },
  },
  ageColumn,
  {
    name: "Version",
    type: "string",
    format: "",
    description: "Kubelet Version reported by the node.",
    priority: 0,
    cell: (object) => text(object, "status", "nodeInfo", "kubeletVersion"),
  },
  {
    name: "Internal-IP",
    type: "string",
    format: "",
    description: "List of addresses reachable to the node. Queried from cloud provider, if available.",
    priority: 1,
    cell: (object) => nodeAddress(object, "InternalIP"),
  },
  {
    name: "External-IP",
    type: "string",
    format: "",
    description: "List of addresses reachable to the node. Queried from cloud provider, if available.",
    priority: 1,
    cell: (object) => nodeAddress(object, "ExternalIP"),
  },
  {
    name: "OS-Image",
    type: "string",
    format: "",
    description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    priority: 1,
    cell: (object) => text(object, "status", "nodeInfo", "osImage"),
  },
  {
    name: "Kernel-Version",
    type: "string",
    format: "",
    description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    priority: 1,
    cell: (object) => text(object, "status", "nodeInfo", "kernelVersion"),
  },
  {
    name: "Container-Runtime",
    type: "string",
    format: "",
    description: "Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    priority: 1,
    cell: (object) => text(object, "status", "nodeInfo", "containerRuntimeVersion"),
  },
]

const namespaceColumns: ReadonlyArray<Column> = [
  nameColumn,
  {
    name: "Status",
    type: "string",
    format: "",
    description: "The status of the namespace",
    priority: 0,
    cell: (object) => text(object, "status", "phase"),
  },
  ageColumn,
]

const leaseColumns: ReadonlyArray<Column> = [
  nameColumn,
  {
    name: "Holder",
    type: "string",
    format: "",
    description: "holderIdentity contains the identity of the holder of a current lease.",
    priority: 0,
    cell: (object) => text(object, "spec", "holderIdentity"),
  },
  ageColumn,
]

/** The API server's printer for ResourceSlices: NAME, NODE, DRIVER, POOL, AGE. */
const resourceSliceColumns: ReadonlyArray<Column> = [
  nameColumn,
  {
    name: "Node",
    type: "string",
    format: "",
    description:
      "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.",
    priority: 0,
    cell: (object) => text(object, "spec", "nodeName") || "<none>",
  },
  {
    name: "Driver",
    type: "string",
    format: "",
    description:
      "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.",
    priority: 0,
    cell: (object) => text(object, "spec", "driver"),
  },
  {
    name: "Pool",
    type: "string",
    format: "",
    description:
      "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.",
    priority: 0,
    cell: (object) => text(object, "spec", "pool", "name"),
  },
  ageColumn,
]

const columnsByResource: Readonly<Record<string, ReadonlyArray<Column>>> = {
  pods: podColumns,
  nodes: nodeColumns,
  namespaces: namespaceColumns,
  leases: leaseColumns,
  resourceslices: resourceSliceColumns,
}

const columnsOf = (kind: ResourceKind): ReadonlyArray<Column> =>
  columnsByResource[kind.resource] ?? [nameColumn, ageColumn]

/** `includeObject` of a Table request: what each row carries besides its cells. */
export type TableObjectPolicy = "None" | "Metadata" | "Object"

export interface TableOptions {
  readonly includeObject: TableObjectPolicy
  readonly withHeaders: boolean
}

/**
 * Renders objects as a `meta.k8s.io/v1` Table, the form `kubectl get` asks for with `as=Table`, piece
 * by piece, so a large table can be streamed while its rows are still being computed.
 */
export function* tableParts(
  kind: ResourceKind,
  objects: ReadonlyArray<StoredObject>,
  metadata: JsonObject,
  options: TableOptions,
  now: Date,
): Generator<string> {
  const columns = columnsOf(kind)
  const head = {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata,
    columnDefinitions: options.withHeaders
      ? columns.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority }))
      : [],
  }
  yield `${JSON.stringify(head).slice(0, -1)},"rows":[`
  for (let index = 0; index < objects.length; index++) {
    const stored = objects[index] as StoredObject
    yield `${index === 0 ? "" : ","}${rowJson(columns, stored, options.includeObject, now)}`
  }
  yield "]}"
}

/** A whole Table as one text, for small tables such as one watch event. */
export const renderTable = (
  kind: ResourceKind,
  objects: ReadonlyArray<StoredObject>,
  metadata: JsonObject,
  options: TableOptions,
  now: Date,
): string => [...tableParts(kind, objects, metadata, options, now)].join("")

const rowJson = (
  columns: ReadonlyArray<Column>,
  stored: StoredObject,
  includeObject: TableObjectPolicy,
  now: Date,
): string => {
  const cells = JSON.stringify(columns.map((column) => column.cell(stored.object, now)))
  if (includeObject === "None") return `{"cells":${cells}}`
  if (includeObject === "Object") return `{"cells":${cells},"object":${stored.json}}`
  const partial = {
    kind: "PartialObjectMetadata",
    apiVersion: "meta.k8s.io/v1",
    metadata: stored.object.metadata ?? {},
  }
  return `{"cells":${cells},"object":${JSON.stringify(partial)}}`
}

const text = (object: JsonObject, ...path: string[]): string => {
  let cursor: JsonValue | undefined = object
  for (const segment of path) {
    if (!isJsonObject(cursor)) return ""
    cursor = cursor[segment]
  }
  return typeof cursor === "string" ? cursor : ""
}

const array = (object: JsonObject, ...path: string[]): JsonArray => {
  let cursor: JsonValue | undefined = object
  for (const segment of path) {
    if (!isJsonObject(cursor)) return []
    cursor = cursor[segment]
  }
  return Array.isArray(cursor) ? cursor : []
}

const containerStatuses = (object: JsonObject): JsonObject[] =>
  array(object, "status", "containerStatuses").filter((status): status is JsonObject => isJsonObject(status))

const podStatusReason = (object: JsonObject): string => {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {}
  if (typeof metadata.deletionTimestamp === "string") return "Terminating"
  let reason = text(object, "status", "reason") || text(object, "status", "phase") || "Unknown"
  for (const status of containerStatuses(object)) {
    const state = status.state
    if (!isJsonObject(state)) continue
    const waiting = state.waiting
    if (isJsonObject(waiting) && typeof waiting.reason === "string" && waiting.reason !== "") reason = waiting.reason
    const terminated = state.terminated
    if (isJsonObject(terminated) && typeof terminated.reason === "string" && terminated.reason !== "")
      reason = terminated.reason
  }
  return reason
}

const nodeAddress = (object: JsonObject, type: string): string => {
  const address = array(object, "status", "addresses").find(
    (candidate) => isJsonObject(candidate) && candidate.type === type,
  )
  return isJsonObject(address) && typeof address.address === "string" ? address.address : "<none>"
}

/** The short ages `kubectl` shows (`5s`, `3m12s`, `4h`, `12d`), computed from a creation timestamp. */
export const humanAge = (timestamp: string, now: Date): string => {
  const created = Date.parse(timestamp)
  if (Number.isNaN(created)) return "<unknown>"
  const seconds = Math.floor((now.getTime() - created) / 1000)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 60 * 2) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`
  if (minutes < 60 * 3) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`
  const years = Math.floor(hours / 24 / 365)
  if (years < 8) return `${years}y${Math.floor(hours / 24) % 365}d`
  return `${years}y`
}
