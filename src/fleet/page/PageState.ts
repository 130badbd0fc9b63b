/**
 * The page's state is its URL, so a link pasted into a ticket opens the same view: `/` with the search
 * and filters in the query string, `/gpus/<uuid>` for one GPU, `/nodes/<name>` for one node. Pure: no DOM,
 * no fetch; the page and the unit tests share it.
 */

/** The GPU list filters the URL may carry, in the order the URL writes them; the API takes the same names. */
export const searchFilters = ["q", "serial", "uuid", "node", "chassis", "model", "cluster", "health"] as const

export type SearchFilter = (typeof searchFilters)[number]

export type Search = Readonly<Partial<Record<SearchFilter, string>>>

export type View =
  | { readonly kind: "home"; readonly search: Search }
  | { readonly kind: "gpu"; readonly uuid: string }
  | { readonly kind: "node"; readonly name: string }

/** One path segment as the URL writes it, or undefined when it is malformed percent-encoding or empty. */
const segment = (raw: string): string | undefined => {
  try {
    const decoded = decodeURIComponent(raw)
    return decoded === "" ? undefined : decoded
  } catch {
    return undefined
  }
}

/** The view a location shows; an unknown path shows the home view with the search it carries. */
export const viewOf = (pathname: string, query: string): View => {
  const parts = pathname.split("/").filter((part) => part !== "")
  if (parts.length === 2 && parts[0] === "gpus") {
    const uuid = segment(parts[1] ?? "")
    if (uuid !== undefined) return { kind: "gpu", uuid }
  }
  if (parts.length === 2 && parts[0] === "nodes") {
    const name = segment(parts[1] ?? "")
    if (name !== undefined) return { kind: "node", name }
  }
  const params = new URLSearchParams(query)
  const search: Partial<Record<SearchFilter, string>> = {}
  for (const filter of searchFilters) {
    const value = params.get(filter)?.trim()
    if (value !== undefined && value !== "") search[filter] = value
  }
  return { kind: "home", search }
}

const queryOf = (search: Search): string => {
  const params = new URLSearchParams()
  for (const filter of searchFilters) {
    const value = search[filter]?.trim()
    if (value !== undefined && value !== "") params.set(filter, value)
  }
  const query = params.toString()
  return query === "" ? "" : `?${query}`
}

/** The path and query that show a view: `viewOf` of it gives the view back. */
export const locationOf = (view: View): string => {
  switch (view.kind) {
    case "gpu":
      return `/gpus/${encodeURIComponent(view.uuid)}`
    case "node":
      return `/nodes/${encodeURIComponent(view.name)}`
    case "home":
      return `/${queryOf(view.search)}`
  }
}

/** The API path for one page of a search's GPUs, from `cursor` when given. */
export const gpuListPath = (search: Search, limit: number, cursor?: string): string => {
  const params = new URLSearchParams(queryOf(search))
  params.set("limit", String(limit))
  if (cursor !== undefined) params.set("cursor", cursor)
  return `/api/v1/gpus?${params.toString()}`
}

export const gpuPath = (uuid: string): string => `/api/v1/gpus/${encodeURIComponent(uuid)}`

/** Without a limit: the server answers as many entries as it keeps, which differs by store. */
export const gpuHistoryPath = (uuid: string): string => `${gpuPath(uuid)}/history`

export const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`

/** True when the search has no filter at all: the page then lists the fleet's first page, in the API's order. */
export const isEmptySearch = (search: Search): boolean => searchFilters.every((filter) => search[filter] === undefined)

/** The search with one filter set, or removed when the value is blank. */
export const withFilter = (search: Search, filter: SearchFilter, value: string): Search => {
  const next: Partial<Record<SearchFilter, string>> = { ...search }
  const trimmed = value.trim()
  if (trimmed === "") delete next[filter]
  else next[filter] = trimmed
  return next
}
