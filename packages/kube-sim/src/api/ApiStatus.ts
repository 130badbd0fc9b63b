import type { JsonObject } from "./Json.ts"

/** The reasons a `meta/v1` Status carries, as the Kubernetes API server spells them. */
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "Invalid"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "UnsupportedMediaType"
  | "RequestEntityTooLarge"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Timeout"

export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly causes?: ReadonlyArray<{ readonly reason?: string; readonly message: string; readonly field?: string }>
  readonly retryAfterSeconds?: number
}

/** An API failure that is answered as a `Status` object with its HTTP code. */
export class ApiError extends Error {
  readonly code: number
  readonly reason: StatusReason
  readonly details: StatusDetails | undefined

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message)
    this.name = "ApiError"
    this.code = code
    this.reason = reason
    this.details = details
  }

  toStatus(): JsonObject {
    return statusObject(this.code, this.reason, this.message, this.details)
  }
}

export const statusObject = (
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): JsonObject => {
  const status: JsonObject = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
  }
  if (details !== undefined) status.details = detailsJson(details)
  status.code = code
  return status
}

const detailsJson = (details: StatusDetails): JsonObject => {
  const json: JsonObject = {}
  if (details.name !== undefined) json.name = details.name
  if (details.group !== undefined) json.group = details.group
  if (details.kind !== undefined) json.kind = details.kind
  if (details.causes !== undefined)
    json.causes = details.causes.map((cause) => {
      const entry: JsonObject = {}
      if (cause.reason !== undefined) entry.reason = cause.reason
      entry.message = cause.message
      if (cause.field !== undefined) entry.field = cause.field
      return entry
    })
  if (details.retryAfterSeconds !== undefined) json.retryAfterSeconds = details.retryAfterSeconds
  return json
}

/** `pods "x" not found`, the exact wording clients match on. */
export const notFound = (resource: string, group: string, name: string): ApiError =>
  new ApiError(404, "NotFound", `${qualified(resource, group)} "${name}" not found`, {
    name,
    ...(group === "" ? {} : { group }),
    kind: resource,
  })

export const alreadyExists = (resource: string, group: string, name: string): ApiError =>
  new ApiError(409, "AlreadyExists", `${qualified(resource, group)} "${name}" already exists`, {
    name,
    ...(group === "" ? {} : { group }),
    kind: resource,
  })

export const conflict = (resource: string, group: string, name: string): ApiError =>
  new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, ...(group === "" ? {} : { group }), kind: resource },
  )

/**
 * What RBAC answers a request it does not allow, in the API server's words: `pods "x" is forbidden: User
 * "…" cannot create resource "pods/exec" in API group "" in the namespace "ns"`.
 */
export const forbidden = (
  user: string,
  verb: string,
  resource: string,
  subresource: string,
  namespace: string,
  name: string,
  group = "",
): ApiError => {
  const qualified = group === "" ? resource : `${resource}.${group}`
  const target = name === "" ? qualified : `${qualified} "${name}"`
  const what = subresource === "" ? resource : `${resource}/${subresource}`
  const scope = namespace === "" ? "at the cluster scope" : `in the namespace "${namespace}"`
  return new ApiError(
    403,
    "Forbidden",
    `${target} is forbidden: User "${user}" cannot ${verb} resource "${what}" in API group "${group}" ${scope}`,
    { ...(name === "" ? {} : { name }), ...(group === "" ? {} : { group }), kind: resource },
  )
}

export const badRequest = (message: string): ApiError => new ApiError(400, "BadRequest", message)

export const invalid = (kind: string, group: string, name: string, field: string, message: string): ApiError =>
  new ApiError(422, "Invalid", `${kind} "${name}" is invalid: ${field}: ${message}`, {
    name,
    ...(group === "" ? {} : { group }),
    kind,
    causes: [{ reason: "FieldValueInvalid", message, field }],
  })

/** The Status a watch or a list gets when its resourceVersion has been compacted away. */
export const expired = (message: string): ApiError => new ApiError(410, "Expired", message)

const qualified = (resource: string, group: string): string => (group === "" ? resource : `${resource}.${group}`)
