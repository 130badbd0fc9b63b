import { ApiError, expired } from "./ApiStatus.ts"
import type { Representation } from "./ContentNegotiation.ts"
import { decodeContinue, encodeContinue } from "./ContinueToken.ts"
import type { FieldSelector } from "./FieldSelector.ts"
import type { JsonObject } from "./Json.ts"
import type { LabelSelector } from "./LabelSelector.ts"
import { apiVersionOf, type ResourceKind } from "./ResourceKind.ts"
import type { ResourceStore, StoredObject } from "./ResourceStore.ts"
import { tableParts } from "./TableView.ts"
import { asServed } from "./VersionConversion.ts"

export interface ListRequest {
  readonly kind: ResourceKind
  readonly namespace: string
  readonly labels: LabelSelector
  readonly fields: FieldSelector
  readonly hasSelectors: boolean
  readonly resourceVersion: string
  readonly resourceVersionMatch: string
  readonly limit: number
  readonly continueToken: string
  readonly representation: Representation
}

/**
 * Answers a list with the API server's resourceVersion semantics: unset or `0` is the current state;
 * `Exact` (and a legacy paginated request with a revision) is the state at that revision, 410 Gone when
 * it is compacted; `NotOlderThan` accepts anything at least as new. Pages carry a `continue` token that
 * serves the rest from the same snapshot.
 */
/** A list body in parts, streamed without joining them first; Table rows are computed as they are sent. */
export type ListBody = Iterable<string | Buffer>

export const serveList = (request: ListRequest, store: ResourceStore, now: Date): ListBody => {
  const { kind } = request
  let revision: number
  let objects: StoredObject[]
  let startAfter = ""
  if (request.continueToken !== "") {
    const token = decodeContinue(request.continueToken)
    if (token.revision < store.oldestRevision)
      throw expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
      )
    revision = token.revision
    startAfter = token.startAfter
    objects = store.listAt(kind, revision, request.namespace)
  } else {
    revision = requestedRevision(request, store)
    objects =
      revision === store.currentRevision
        ? store.list(kind, request.namespace)
        : store.listAt(kind, revision, request.namespace)
  }
  const selected: StoredObject[] = []
  let remaining = 0
  let continueAfter = ""
  for (const stored of objects) {
    if (startAfter !== "" && stored.key <= startAfter) continue
    if (!request.labels.matches(stored.labels) || !request.fields.matches(stored.object)) continue
    if (request.limit > 0 && selected.length >= request.limit) {
      remaining++
      continue
    }
    selected.push(asServed(kind, stored))
  }
  if (remaining > 0) continueAfter = selected[selected.length - 1]?.key ?? ""
  const metadata: JsonObject = { resourceVersion: String(revision) }
  if (continueAfter !== "") {
    metadata.continue = encodeContinue({ revision, startAfter: continueAfter })
    if (!request.hasSelectors) metadata.remainingItemCount = remaining
  }
  if (request.representation.table)
    return tableParts(
      kind,
      selected,
      metadata,
      { includeObject: request.representation.includeObject, withHeaders: true },
      now,
    )
  const head = JSON.stringify({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata })
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},"items":[`, "utf8")]
  selected.forEach((stored, index) => {
    if (index > 0) parts.push(comma)
    parts.push(stored.bytes)
  })
  parts.push(listEnd)
  return parts
}

const comma = Buffer.from(",", "utf8")
const listEnd = Buffer.from("]}", "utf8")

const requestedRevision = (request: ListRequest, store: ResourceStore): number => {
  const text = request.resourceVersion
  const match = request.resourceVersionMatch
  if (match !== "" && match !== "Exact" && match !== "NotOlderThan")
    throw new ApiError(
      400,
      "BadRequest",
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    )
  if (text === "" || text === "0") {
    if (match === "Exact")
      throw new ApiError(
        400,
        "BadRequest",
        `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "${text}"`,
      )
    return store.currentRevision
  }
  const revision = Number(text)
  if (!Number.isInteger(revision) || revision < 0)
    throw new ApiError(400, "BadRequest", `resourceVersion: Invalid value: "${text}": must be a valid resource version`)
  if (revision > store.currentRevision)
    throw new ApiError(
      504,
      "Timeout",
      `Timeout: Too large resource version: ${revision}, current: ${store.currentRevision}`,
      {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      },
    )
  const exact = match === "Exact" || (match === "" && request.limit > 0)
  return exact ? revision : store.currentRevision
}
