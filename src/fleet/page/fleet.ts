/**
 * The fleet page: renders the view its URL names (PageState.ts) from the read-only API, with text nodes only
 * (never HTML from the API), pages of at most a thousand GPUs, and no request outside this service.
 */
import { forgetToken, getJson, storedToken, storeToken, Unauthorized } from "./ApiClient.ts"
import type {
  EventPage,
  EventRecord,
  FleetStatus,
  Gpu,
  GpuDetail,
  GpuHistory,
  GpuPage,
  HistoryEntry,
  NodeDetail,
  NodePage,
  NodeSummary,
} from "./ApiTypes.ts"
import { csvFileName, csvMaxRows, csvOf } from "./Csv.ts"
import {
  gpuHistoryPath,
  gpuListPath,
  gpuPath,
  isEmptySearch,
  locationOf,
  nodePath,
  type Search,
  searchFilters,
  type View,
  viewOf,
  withFilter,
} from "./PageState.ts"

const resultsPageSize = 100
const suspectsLimit = 50
const eventsShown = 30
const chassisLimit = 1000
const csvPageSize = 1000
const searchDebounceMs = 200
const refreshEveryMs = 5_000

type Child = Node | string | undefined
type Attributes = Readonly<Record<string, string | undefined>>

/** An element with attributes and children; text always enters as text nodes. */
const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value)
  for (const child of children) if (child !== undefined) element.append(child)
  return element
}

const byId = <E extends HTMLElement>(id: string, type: new () => E): E => {
  const element = document.getElementById(id)
  if (!(element instanceof type)) throw new Error(`The page shell lacks #${id}.`)
  return element
}

const viewRoot = byId("view", HTMLElement)
const statusLine = byId("status", HTMLElement)
const searchForm = byId("search-form", HTMLFormElement)
const searchInput = byId("search", HTMLInputElement)
const tokenPrompt = byId("token-prompt", HTMLElement)
const tokenForm = byId("token-form", HTMLFormElement)
const tokenInput = byId("token", HTMLInputElement)
const tokenError = byId("token-error", HTMLElement)

const numberFormat = new Intl.NumberFormat("en")
const count = (n: number): string => numberFormat.format(n)

/** An RFC 3339 time as `2026-12-02 05:20:31 UTC`, in a `<time>` element carrying the original. */
const timeOf = (iso: string): HTMLTimeElement => {
  const date = new Date(iso)
  const text = Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`
  return el("time", { datetime: iso }, text)
}

const link = (view: View, text: string, attributes: Attributes = {}): HTMLAnchorElement =>
  el("a", { ...attributes, href: locationOf(view), "data-link": "" }, text)

const gpuLink = (uuid: string, text: string): HTMLAnchorElement => link({ kind: "gpu", uuid }, text)

const nodeLink = (name: string): HTMLAnchorElement => link({ kind: "node", name }, name)

/** Whether this is a hub's page: nodes are named `<cluster>/<node>` there, since node names repeat across clusters. */
let acrossClusters = false

/** A link to the node a GPU was on, in its cluster on a hub's page. */
const placeLink = (cluster: string | undefined, node: string): HTMLAnchorElement =>
  acrossClusters && cluster !== undefined ? nodeLink(`${cluster}/${node}`) : nodeLink(node)

const chassisLink = (chassis: string): Child =>
  chassis === "" ? el("span", { class: "none" }, "none") : link({ kind: "home", search: { chassis } }, chassis)

/** A health badge: its word is always shown, the colour only repeats it. */
const badge = (state: string | undefined): HTMLSpanElement => {
  const word = state ?? "unknown"
  return el("span", { class: `badge badge-${word}` }, word)
}

const cell = (...children: ReadonlyArray<Child>): HTMLTableCellElement => el("td", {}, ...children)

const code = (text: string | undefined): Child => (text === undefined || text === "" ? "" : el("code", {}, text))

const table = (
  caption: string,
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<HTMLTableRowElement>,
  empty: string,
): HTMLElement => {
  if (rows.length === 0) return el("p", { class: "empty" }, empty)
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      {},
      el("caption", { class: "visually-hidden" }, caption),
      el("thead", {}, el("tr", {}, ...headers.map((header) => el("th", { scope: "col" }, header)))),
      el("tbody", {}, ...rows),
    ),
  )
}

const definitions = (pairs: ReadonlyArray<readonly [string, Child]>): HTMLDListElement =>
  el(
    "dl",
    { class: "facts" },
    ...pairs.flatMap(([term, value]) =>
      value === undefined || value === "" ? [] : [el("div", {}, el("dt", {}, term), el("dd", {}, value))],
    ),
  )

/** Replaces an element's children, skipping the absent ones. */
const fill = (target: HTMLElement, ...children: ReadonlyArray<Child>): void =>
  target.replaceChildren(...children.filter((child): child is Node | string => child !== undefined))

const errorLine = (error: unknown): HTMLElement =>
  el("p", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error))

// ---------------------------------------------------------------------------------------------------------------
// Requests of the current view: navigating away cancels them, and a 401 shows the token prompt.

let viewRequests = new AbortController()

const isCancelled = (error: unknown): boolean => error instanceof DOMException && error.name === "AbortError"

/** Shows the token prompt in place of the view; the view renders again once a token is given. */
const askForToken = (refused: boolean): void => {
  if (refused) tokenError.hidden = false
  viewRoot.hidden = true
  if (!tokenPrompt.hidden) return
  tokenPrompt.hidden = false
  tokenInput.focus()
}

/** Runs one part of a view; a failure shows in `target` (or the prompt, for a 401) and never breaks the rest. */
const guarded = async (target: HTMLElement, part: () => Promise<void>): Promise<void> => {
  try {
    await part()
  } catch (error) {
    if (isCancelled(error)) return
    if (error instanceof Unauthorized) {
      const hadToken = storedToken() !== undefined
      forgetToken()
      askForToken(hadToken)
      return
    }
    target.replaceChildren(errorLine(error))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The status line: cluster, role, and the follower notice.

const statusText = (status: FleetStatus): string => {
  const counts = `${count(status.gpus)} GPUs on ${count(status.nodes)} nodes`
  if (status.acrossClusters === true) {
    return `Hub ${status.cluster} · GPUs of every cluster · ${counts} · ${status.history === "postgres" ? "history from PostgreSQL" : "history since this process started"}`
  }
  const history = status.history === "postgres" ? "history from PostgreSQL" : "history since this process started"
  const leader = status.leader ?? "unknown"
  if (status.role === "follower" && status.source === "none") {
    return `Cluster ${status.cluster} · this replica is following the leader ${leader} and holds no inventory: open the leader's page (kubectl port-forward to the leader's pod).`
  }
  if (status.role === "follower") {
    return `Cluster ${status.cluster} · this replica is following the leader ${leader}; answers come from the durable store · ${counts} · ${history}`
  }
  return `Cluster ${status.cluster} · ${status.role === "single" ? "single replica" : "leader"} · ${counts} · ${history}`
}

const refreshStatus = async (signal: AbortSignal): Promise<void> => {
  const status = await getJson<FleetStatus>("/api/v1/status", signal)
  statusLine.textContent = statusText(status)
  statusLine.classList.toggle("following", status.role === "follower")
  if ((status.acrossClusters === true) !== acrossClusters) {
    // The links drawn before the status came name nodes the other way: drawn again.
    acrossClusters = status.acrossClusters === true
    render(false)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Home: the search results, the suspects, the recent events.

const gpuRow = (gpu: Gpu, testId: string): HTMLTableRowElement =>
  el(
    "tr",
    { "data-testid": testId },
    cell(gpuLink(gpu.uuid, gpu.gpu === "" ? "(no serial)" : gpu.gpu)),
    cell(code(gpu.uuid)),
    cell(placeLink(gpu.cluster, gpu.node)),
    cell(chassisLink(gpu.chassis)),
    cell(gpu.product ?? ""),
    cell(code(gpu.pciBusId)),
    cell(gpu.moduleId === undefined ? "" : String(gpu.moduleId)),
    cell(badge(gpu.health?.state)),
    cell(timeOf(gpu.lastSeen)),
  )

const gpuHeaders = ["Serial", "UUID", "Node", "Chassis", "Model", "PCI", "Module", "Health", "Last seen"]

const searchLabel = (search: Search): string =>
  searchFilters.flatMap((filter) => (search[filter] === undefined ? [] : [`${filter} ${search[filter]}`])).join(", ")

/** Fetches the search's pages one after another into a CSV file, at most `csvMaxRows` GPUs. */
const downloadCsv = async (search: Search, button: HTMLButtonElement, note: HTMLElement): Promise<void> => {
  const gpus: Array<Gpu> = []
  let cursor: string | undefined
  let total = 0
  button.disabled = true
  try {
    do {
      const page = await getJson<GpuPage>(gpuListPath(search, csvPageSize, cursor))
      gpus.push(...page.items)
      total = page.total
      cursor = page.nextCursor
      button.textContent = `Downloading… ${count(gpus.length)} of ${count(Math.min(total, csvMaxRows))}`
    } while (cursor !== undefined && gpus.length < csvMaxRows)
    const rows = gpus.slice(0, csvMaxRows)
    const url = URL.createObjectURL(new Blob([csvOf(rows)], { type: "text/csv;charset=utf-8" }))
    const anchor = el("a", { href: url, download: csvFileName(searchLabel(search)) })
    document.body.append(anchor)
    anchor.click()
    anchor.remove()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
    note.textContent =
      total > rows.length
        ? `The file holds the first ${count(rows.length)} of ${count(total)} GPUs; narrow the search for the rest.`
        : `The file holds all ${count(rows.length)} GPUs of this search.`
  } finally {
    button.disabled = false
    button.textContent = "Download CSV"
  }
}

const healthFilterChoices: ReadonlyArray<readonly [string, string]> = [
  ["", "any health"],
  ["failed,degraded", "failed or degraded"],
  ["failed", "failed"],
  ["degraded", "degraded"],
  ["ok", "ok"],
  ["unknown", "unknown"],
]

/** The results section: a table of one page, its total, paging by the API's cursor, the CSV download. */
const renderResults = (section: HTMLElement, search: Search, signal: AbortSignal): void => {
  const cursors: Array<string | undefined> = [undefined]
  const summary = el("p", { class: "summary", "aria-live": "polite" }, "Searching…")
  const body = el("div", {})
  const previous = el("button", { type: "button", disabled: "" }, "Previous page")
  const next = el("button", { type: "button", disabled: "" }, "Next page")
  const csvButton = el("button", { type: "button" }, "Download CSV")
  const csvNote = el("p", { class: "hint", "aria-live": "polite" })
  const health = el("select", { id: "health-filter", name: "health" })
  for (const [value, label] of healthFilterChoices) {
    const option = el("option", { value }, label)
    option.selected = (search.health ?? "") === value
    health.append(option)
  }
  if (search.health !== undefined && !healthFilterChoices.some(([value]) => value === search.health)) {
    const option = el("option", { value: search.health }, search.health)
    option.selected = true
    health.append(option)
  }
  health.addEventListener("change", () =>
    navigate({ kind: "home", search: withFilter(search, "health", health.value) }, "replace"),
  )
  csvButton.addEventListener("click", () => void guarded(csvNote, () => downloadCsv(search, csvButton, csvNote)))

  const show = async (page: number): Promise<void> => {
    const answer = await getJson<GpuPage>(gpuListPath(search, resultsPageSize, cursors[page]), signal)
    cursors[page + 1] = answer.nextCursor
    const first = page * resultsPageSize
    summary.textContent =
      answer.total === 0
        ? "No GPU matches."
        : `${count(answer.total)} GPU${answer.total === 1 ? "" : "s"} · showing ${count(first + 1)}–${count(first + answer.items.length)}`
    body.replaceChildren(
      table(
        "GPUs of the search",
        gpuHeaders,
        answer.items.map((gpu) => gpuRow(gpu, "result-row")),
        "No GPU matches this search.",
      ),
    )
    previous.disabled = page === 0
    next.disabled = answer.nextCursor === undefined
    previous.onclick = () => void guarded(body, () => show(page - 1))
    next.onclick = () => void guarded(body, () => show(page + 1))
  }

  const filters = searchFilters.filter(
    (filter) => filter !== "q" && filter !== "health" && search[filter] !== undefined,
  )
  section.replaceChildren(
    el("h2", { id: "results-title" }, isEmptySearch(search) ? "GPUs" : "Search results"),
    el(
      "div",
      { class: "toolbar" },
      el("label", { for: "health-filter" }, "Health"),
      health,
      ...filters.map((filter) =>
        link({ kind: "home", search: withFilter(search, filter, "") }, `${filter}: ${search[filter] ?? ""} ×`, {
          class: "chip",
          "aria-label": `Remove the ${filter} filter ${search[filter] ?? ""}`,
        }),
      ),
      csvButton,
    ),
    csvNote,
    summary,
    body,
    el("nav", { class: "pager", "aria-label": "Result pages" }, previous, next),
  )
  void guarded(body, () => show(0))
}

const suspectNodeRow = (node: NodeSummary): HTMLTableRowElement =>
  el(
    "tr",
    { "data-testid": "suspect-row" },
    cell(nodeLink(node.name)),
    cell(badge("failed"), " ", node.lastReading?.failureKind ?? "reading failed"),
    cell(node.lastReading === undefined ? "" : timeOf(node.lastReading.time)),
    cell(`${count(node.gpus)} GPUs`),
  )

/** A suspect GPU, compact: the overview shows it beside the recent events. */
const suspectGpuRow = (gpu: Gpu): HTMLTableRowElement =>
  el(
    "tr",
    { "data-testid": "suspect-row" },
    cell(gpuLink(gpu.uuid, gpu.gpu === "" ? gpu.uuid : gpu.gpu)),
    cell(placeLink(gpu.cluster, gpu.node)),
    cell(badge(gpu.health?.state), " ", (gpu.health?.reasons ?? []).join(", ")),
    cell(gpu.product ?? ""),
  )

const refreshSuspects = async (target: HTMLElement, signal: AbortSignal): Promise<void> => {
  // Failed before degraded, each bounded: many degraded GPUs never push a failed one out of view.
  const [failed, degraded, nodes] = await Promise.all([
    getJson<GpuPage>(gpuListPath({ health: "failed" }, suspectsLimit), signal),
    getJson<GpuPage>(gpuListPath({ health: "degraded" }, suspectsLimit), signal),
    getJson<NodePage>(`/api/v1/nodes?failing=true&limit=${String(suspectsLimit)}`, signal),
  ])
  const more = (page: GpuPage, health: string): Child =>
    page.total > page.items.length
      ? el(
          "p",
          { class: "hint" },
          `${count(page.total - page.items.length)} more: `,
          link({ kind: "home", search: { health } }, `list every ${health} GPU`),
        )
      : undefined
  const gpuTable = (page: GpuPage, health: string): HTMLElement =>
    table(
      `${health} GPUs`,
      ["Serial", "Node", "Health", "Model"],
      page.items.map(suspectGpuRow),
      `No GPU is ${health}.`,
    )
  fill(
    target,
    el("h3", {}, `Failed GPUs (${count(failed.total)})`),
    gpuTable(failed, "failed"),
    more(failed, "failed"),
    el("h3", {}, `Degraded GPUs (${count(degraded.total)})`),
    gpuTable(degraded, "degraded"),
    more(degraded, "degraded"),
    el("h3", {}, `Nodes whose last reading failed (${count(nodes.total)})`),
    table(
      "Failing nodes",
      ["Node", "Failure", "Last reading", "GPUs"],
      nodes.items.map(suspectNodeRow),
      "Every node's last reading succeeded.",
    ),
  )
}

const eventDetail = (event: EventRecord): Child => {
  if (event.event === "moved") {
    return el(
      "span",
      {},
      "from ",
      event.previousNode === undefined ? "?" : placeLink(event.previousCluster ?? event.cluster, event.previousNode),
      " to ",
      placeLink(event.cluster, event.node),
    )
  }
  if (event.event === "health") {
    return el("span", {}, badge(event.previousHealthState), " → ", badge(event.health?.state))
  }
  return el("span", {}, "from ", placeLink(event.cluster, event.node))
}

const eventRow = (event: EventRecord): HTMLTableRowElement =>
  el(
    "tr",
    { "data-testid": "event-row" },
    cell(timeOf(event.time)),
    cell(el("span", { class: `event event-${event.event}` }, event.event)),
    cell(gpuLink(event.uuid, event.gpu === "" ? event.uuid : event.gpu)),
    cell(eventDetail(event)),
  )

const refreshEvents = async (target: HTMLElement, signal: AbortSignal): Promise<void> => {
  const events = await getJson<EventPage>("/api/v1/events?kind=moved,removed,health", signal)
  const shown = events.items.slice(0, eventsShown)
  fill(
    target,
    table(
      "Recent moves, removals and health changes",
      ["Time", "Event", "GPU", "What changed"],
      shown.map(eventRow),
      `No move, removal or health change among the last ${count(events.capacity)} events.`,
    ),
    events.items.length > shown.length
      ? el(
          "p",
          { class: "hint" },
          `The newest ${count(shown.length)} of the service's last ${count(events.capacity)} events.`,
        )
      : undefined,
  )
}

/** The home view on screen: a new search there renders only its results, the overview keeps refreshing. */
interface ShownHome {
  readonly results: HTMLElement
  readonly overview: HTMLElement
  readonly signal: AbortSignal
  searchRequests: AbortController
}

let shownHome: ShownHome | undefined

/** Shows a search's results in the home view on screen, cancelling the previous search's requests. */
const showSearch = (home: ShownHome, search: Search): void => {
  home.searchRequests.abort()
  home.searchRequests = new AbortController()
  // Without a search the operator lands here: what needs attention comes first.
  if (isEmptySearch(search)) viewRoot.replaceChildren(home.overview, home.results)
  else viewRoot.replaceChildren(home.results, home.overview)
  renderResults(home.results, search, AbortSignal.any([home.signal, home.searchRequests.signal]))
}

const renderHome = (search: Search, signal: AbortSignal): void => {
  const results = el("section", { class: "panel", "aria-labelledby": "results-title" })
  const suspects = el("div", {}, el("p", { class: "summary" }, "Loading…"))
  const events = el("div", {}, el("p", { class: "summary" }, "Loading…"))
  const overview = el(
    "div",
    { class: "columns" },
    el(
      "section",
      { class: "panel", "aria-labelledby": "suspects-title" },
      el("h2", { id: "suspects-title" }, "Suspects"),
      suspects,
    ),
    el(
      "section",
      { class: "panel", "aria-labelledby": "events-title" },
      el("h2", { id: "events-title" }, "Recent moves, removals and health changes"),
      events,
    ),
  )
  shownHome = { results, overview, signal, searchRequests: new AbortController() }
  showSearch(shownHome, search)
  const refresh = (): void => {
    void guarded(suspects, () => refreshSuspects(suspects, signal))
    void guarded(events, () => refreshEvents(events, signal))
  }
  refresh()
  repeatWhileShown(refresh, signal)
}

// ---------------------------------------------------------------------------------------------------------------
// A node: its GPUs by index, its last reading, and the NVL trays of its chassis.

/** The GPUs of one chassis grouped by node (an NVL tray), trays in name order, GPUs by module. */
const traysOf = (gpus: ReadonlyArray<Gpu>): ReadonlyArray<readonly [string, ReadonlyArray<Gpu>]> => {
  const trays = new Map<string, Array<Gpu>>()
  for (const gpu of gpus) trays.set(gpu.node, [...(trays.get(gpu.node) ?? []), gpu])
  return [...trays.entries()]
    .sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(
      ([node, members]) => [node, members.sort((a, b) => (a.moduleId ?? a.index) - (b.moduleId ?? b.index))] as const,
    )
}

const renderChassis = async (
  target: HTMLElement,
  chassis: string,
  current: string,
  signal: AbortSignal,
): Promise<void> => {
  const page = await getJson<GpuPage>(gpuListPath({ chassis }, chassisLimit), signal)
  fill(
    target,
    el("h3", {}, "Chassis ", chassisLink(chassis), ` · ${count(page.total)} GPUs`),
    el(
      "ol",
      { class: "trays" },
      ...traysOf(page.items).map(([node, gpus]) =>
        el(
          "li",
          { class: node === current ? "tray current" : "tray" },
          el("p", { class: "tray-name" }, nodeLink(node), node === current ? " (this node)" : ""),
          el(
            "ul",
            { class: "modules" },
            ...gpus.map((gpu) =>
              el(
                "li",
                {},
                el(
                  "span",
                  { class: "module" },
                  gpu.moduleId === undefined ? `GPU ${String(gpu.index)}` : `module ${String(gpu.moduleId)}`,
                ),
                badge(gpu.health?.state),
                gpuLink(gpu.uuid, gpu.gpu === "" ? gpu.uuid : gpu.gpu),
              ),
            ),
          ),
        ),
      ),
    ),
    page.total > page.items.length
      ? el("p", { class: "hint" }, `Showing ${count(page.items.length)} of ${count(page.total)} GPUs.`)
      : undefined,
  )
}

const renderNode = async (name: string, signal: AbortSignal): Promise<void> => {
  const body = el("div", {}, el("p", { class: "summary" }, "Loading…"))
  viewRoot.replaceChildren(
    el(
      "section",
      { class: "panel", "data-testid": "node-view", "aria-labelledby": "node-title" },
      el("h2", { id: "node-title", tabindex: "-1" }, `Node ${name}`),
      body,
    ),
  )
  await guarded(body, async () => {
    const node = await getJson<NodeDetail>(nodePath(name), signal)
    const reading = node.lastReading
    const trays = node.chassis.map((chassis) => {
      const tray = el("section", { class: "chassis" }, el("p", { class: "summary" }, `Loading chassis ${chassis}…`))
      void guarded(tray, () => renderChassis(tray, chassis, node.name, signal))
      return tray
    })
    body.replaceChildren(
      definitions([
        ["Machine", code(node.machine)],
        ["Provider ID", code(node.providerId)],
        [
          "Health",
          `${count(node.health.ok)} ok · ${count(node.health.degraded)} degraded · ${count(node.health.failed)} failed · ${count(node.health.unknown)} unknown`,
        ],
        [
          "Last reading",
          reading === undefined
            ? "none yet"
            : el(
                "span",
                {},
                timeOf(reading.time),
                " ",
                badge(reading.result === "ok" ? "ok" : "failed"),
                reading.failureKind === undefined ? "" : ` ${reading.failureKind}`,
              ),
        ],
        ["Failure", node.failure === undefined ? undefined : `${node.failure.kind}: ${node.failure.reason}`],
      ]),
      el("h3", {}, `GPUs by index (${count(node.gpus.length)})`),
      table(
        `GPUs of node ${node.name}`,
        ["Index", "Serial", "UUID", "PCI", "Module", "Chassis", "Model", "Health"],
        node.gpus.map((gpu) =>
          el(
            "tr",
            {},
            cell(String(gpu.index)),
            cell(gpuLink(gpu.uuid, gpu.gpu === "" ? "(no serial)" : gpu.gpu)),
            cell(code(gpu.uuid)),
            cell(code(gpu.pciBusId)),
            cell(gpu.moduleId === undefined ? "" : String(gpu.moduleId)),
            cell(chassisLink(gpu.chassis)),
            cell(gpu.product ?? ""),
            cell(badge(gpu.health?.state)),
          ),
        ),
        "The inventory holds no GPU on this node.",
      ),
      ...(trays.length === 0 ? [] : [el("h3", {}, "NVL trays by chassis"), ...trays]),
    )
  })
}

// ---------------------------------------------------------------------------------------------------------------
// A GPU: what the inventory knows of it, and where it has been.

const historyRow = (entry: HistoryEntry): HTMLTableRowElement =>
  el(
    "tr",
    { "data-testid": "history-row" },
    cell(timeOf(entry.time)),
    cell(el("span", { class: `event event-${entry.event}` }, entry.event)),
    cell(placeLink(entry.cluster, entry.node)),
    cell(code(entry.machine)),
    cell(chassisLink(entry.chassis)),
    cell(entry.healthState === undefined ? "" : badge(entry.healthState)),
    cell(
      entry.previousNode !== undefined
        ? el("span", {}, "was on ", placeLink(entry.previousCluster ?? entry.cluster, entry.previousNode))
        : entry.previousHealthState !== undefined
          ? el("span", {}, "was ", badge(entry.previousHealthState))
          : "",
    ),
  )

const historyNote = (history: GpuHistory): string => {
  if (history.complete) return "Complete history, newest first, from the PostgreSQL store."
  const source = history.from === "postgres" ? "the PostgreSQL store" : "what this process has seen since it started"
  return `Newest first, from ${source}; not complete${history.note === undefined ? "." : `: ${history.note}`}`
}

const renderGpu = async (uuid: string, signal: AbortSignal): Promise<void> => {
  const title = el("h2", { id: "gpu-title", tabindex: "-1" }, `GPU ${uuid}`)
  const body = el("div", {}, el("p", { class: "summary" }, "Loading…"))
  const historyBody = el("div", {}, el("p", { class: "summary" }, "Loading…"))
  viewRoot.replaceChildren(
    el("section", { class: "panel", "aria-labelledby": "gpu-title" }, title, body),
    el(
      "section",
      { class: "panel", "aria-labelledby": "history-title" },
      el("h2", { id: "history-title" }, "History"),
      historyBody,
    ),
  )
  const detail = guarded(body, async () => {
    const gpu = await getJson<GpuDetail>(gpuPath(uuid), signal)
    const reasons = gpu.health?.reasons ?? []
    title.textContent = `GPU ${gpu.gpu === "" ? gpu.uuid : gpu.gpu}`
    body.replaceChildren(
      definitions([
        [
          "Serial",
          gpu.gpu === ""
            ? "none reported"
            : `${gpu.gpu}${gpu.serialShared ? " (shared with another GPU of the node)" : ""}`,
        ],
        ["UUID", code(gpu.uuid)],
        ["Health", el("span", {}, badge(gpu.health?.state), reasons.length === 0 ? "" : ` ${reasons.join(", ")}`)],
        ["RMA eligible", gpu.health === undefined ? undefined : gpu.health.rmaEligible ? "yes" : "no"],
        ...(acrossClusters ? ([["Cluster", gpu.cluster]] as const) : []),
        ["Node", placeLink(gpu.cluster, gpu.node)],
        ["Machine", code(gpu.machine)],
        ["Chassis", chassisLink(gpu.chassis)],
        ["Model", gpu.product],
        ["Index", String(gpu.index)],
        ["PCI", code(gpu.pciBusId)],
        ["Module", gpu.moduleId === undefined ? undefined : String(gpu.moduleId)],
        ["MIG mode", gpu.migMode],
        ["Driver", gpu.driverVersion],
        ["CUDA", gpu.cudaVersion],
        ["Provider ID", code(gpu.providerId)],
        ["Read from", code(gpu.source)],
        ["On its node since", timeOf(gpu.since)],
        ["Last seen", timeOf(gpu.lastSeen)],
      ]),
    )
  })
  const history = guarded(historyBody, async () => {
    const answer = await getJson<GpuHistory>(gpuHistoryPath(uuid), signal)
    historyBody.replaceChildren(
      el("p", { class: "hint" }, historyNote(answer)),
      table(
        "Where this GPU has been",
        ["Time", "Event", "Node", "Machine", "Chassis", "Health", "Before"],
        answer.entries.map(historyRow),
        "No entry yet.",
      ),
    )
  })
  await Promise.all([detail, history])
}

// ---------------------------------------------------------------------------------------------------------------
// Navigation: the URL is the state; links and the search box push or replace it, Back and Forward restore it.

/** Calls `refresh` every few seconds while the view is current and the tab visible. */
const repeatWhileShown = (refresh: () => void, signal: AbortSignal): void => {
  const timer = setInterval(() => {
    if (document.visibilityState === "visible") refresh()
  }, refreshEveryMs)
  signal.addEventListener("abort", () => clearInterval(timer))
}

const titleOf = (view: View): string => {
  switch (view.kind) {
    case "gpu":
      return `GPU ${view.uuid} · gpu-serials`
    case "node":
      return `Node ${view.name} · gpu-serials`
    case "home":
      return isEmptySearch(view.search) ? "GPU fleet · gpu-serials" : `${searchLabel(view.search)} · gpu-serials`
  }
}

const render = (moveFocus: boolean): void => {
  viewRequests.abort()
  viewRequests = new AbortController()
  const signal = viewRequests.signal
  shownHome = undefined
  const view = viewOf(location.pathname, location.search)
  document.title = titleOf(view)
  tokenPrompt.hidden = true
  viewRoot.hidden = false
  if (view.kind === "home" && document.activeElement !== searchInput) searchInput.value = view.search.q ?? ""
  void guarded(statusLine, () => refreshStatus(signal))
  repeatWhileShown(() => void guarded(statusLine, () => refreshStatus(signal)), signal)
  const shown =
    view.kind === "gpu"
      ? renderGpu(view.uuid, signal)
      : view.kind === "node"
        ? renderNode(view.name, signal)
        : Promise.resolve(renderHome(view.search, signal))
  if (moveFocus) void shown.then(() => viewRoot.querySelector<HTMLElement>("h2")?.focus())
}

const navigate = (view: View, mode: "push" | "replace", moveFocus = false): void => {
  const target = locationOf(view)
  if (mode === "push") history.pushState(null, "", target)
  else history.replaceState(null, "", target)
  render(moveFocus)
}

let searchTimer: ReturnType<typeof setTimeout> | undefined

/** Results as you type: the URL follows the box (replaced, so Back skips the keystrokes). */
const searchNow = (mode: "push" | "replace"): void => {
  clearTimeout(searchTimer)
  const current = viewOf(location.pathname, location.search)
  const search = current.kind === "home" ? current.search : {}
  const next = withFilter(search, "q", searchInput.value)
  if (current.kind === "home" && next.q === current.search.q) return
  const view: View = { kind: "home", search: next }
  if (current.kind !== "home" || shownHome === undefined) {
    navigate(view, "push")
    return
  }
  if (mode === "push") history.pushState(null, "", locationOf(view))
  else history.replaceState(null, "", locationOf(view))
  document.title = titleOf(view)
  showSearch(shownHome, next)
}

searchInput.addEventListener("input", () => {
  clearTimeout(searchTimer)
  searchTimer = setTimeout(() => searchNow("replace"), searchDebounceMs)
})

searchForm.addEventListener("submit", (event) => {
  event.preventDefault()
  searchNow("push")
})

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault()
  const token = tokenInput.value.trim()
  if (token === "") return
  storeToken(token)
  tokenInput.value = ""
  tokenError.hidden = true
  render(true)
})

document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return
  const anchor = event.target instanceof Element ? event.target.closest("a[data-link]") : null
  if (!(anchor instanceof HTMLAnchorElement) || anchor.origin !== location.origin) return
  event.preventDefault()
  history.pushState(null, "", anchor.pathname + anchor.search)
  render(true)
})

document.addEventListener("keydown", (event) => {
  const typing =
    event.target instanceof HTMLInputElement ||
    event.target instanceof HTMLSelectElement ||
    event.target instanceof HTMLTextAreaElement
  if (event.key === "/" && !typing && !event.metaKey && !event.ctrlKey && !event.altKey) {
    event.preventDefault()
    searchInput.focus()
    searchInput.select()
  }
})

window.addEventListener("popstate", () => render(false))

render(false)
