import type { Page } from "playwright-core"
import { type FleetService, type GpuList, startDemo } from "../test/fleet/browser/FleetService.ts"
import { type HeadlessChromium, startChromium } from "../test/fleet/browser/HeadlessChromium.ts"
import { type Summary, summarise } from "./Sampling.ts"

/** The demo's fleet: 10,000 nodes of its default model mix, read fast so the sync takes about a minute. */
const demoNodes = 10_000
const demoArgs = [
  "--nodes",
  String(demoNodes),
  "--exec-latency",
  "20ms",
  "--qps",
  "1000",
  "--burst",
  "1000",
  "--workers",
  "64",
]
const syncTimeoutMs = 900_000
const samples = 20
/** Serials searched for, spread over the fleet (every 97th GPU with a serial). */
const searchedSerials = 40

const milliseconds = (summary: Summary): string =>
  `p50 ${summary.medianMs.toFixed(0)} ms, p99 ${summary.p99Ms.toFixed(0)} ms (${summary.runs} loads)`

/** Time from navigation to the page showing its status line: what an operator first sees, with data. */
const loadHome = async (
  page: Page,
  origin: string,
): Promise<{ readonly shownMs: number; readonly paintMs: number }> => {
  const start = performance.now()
  await page.goto(`${origin}/`)
  await page.getByTestId("status").filter({ hasText: /\S/ }).waitFor()
  const shownMs = performance.now() - start
  const paintMs = await page.evaluate<number>(
    "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN",
  )
  return { shownMs, paintMs }
}

/** Time from navigation to `/?q=<serial>` to the serial's result row. */
const loadSearch = async (page: Page, origin: string, serial: string): Promise<number> => {
  const start = performance.now()
  await page.goto(`${origin}/?q=${encodeURIComponent(serial)}`)
  await page.getByTestId("result-row").filter({ hasText: serial }).first().waitFor()
  return performance.now() - start
}

/** Time from typing a serial into the loaded page's search box to its result row. */
const typeSearch = async (page: Page, serial: string): Promise<number> => {
  const start = performance.now()
  await page.getByTestId("search").fill(serial)
  await page.getByTestId("result-row").filter({ hasText: serial }).first().waitFor()
  return performance.now() - start
}

/**
 * `npm run bench -- api`, the page's part: `gpu-serials demo --nodes 10000` and headless Chromium
 * (Debian's, through playwright-core) on this machine; the first render of `/` (to the status line
 * with data, and the browser's first contentful paint), of `/?q=<serial>` to that serial's row, and of
 * a search typed into the loaded page. Each load is a fresh tab of one browser: the first is cold, the
 * rest find the assets in its cache, as an operator's second visit does.
 */
export const fleetPageBench = async (): Promise<ReadonlyArray<string>> => {
  let service: FleetService | undefined
  let browser: HeadlessChromium | undefined
  try {
    const syncStart = performance.now()
    service = await startDemo(demoArgs, { timeoutMs: syncTimeoutMs })
    const syncSeconds = (performance.now() - syncStart) / 1000
    const origin = service.origin
    const status = await service.api<{ readonly gpus: number; readonly nodes: number }>("/api/v1/status")
    const listed = await service.api<GpuList>("/api/v1/gpus?limit=1000")
    const serials = listed.body.items
      .filter((item) => item.gpu !== "")
      .filter((_, at) => at % 97 === 0)
      .map((item) => item.gpu)
      .slice(0, searchedSerials)
    if (serials.length === 0) throw new Error("the demo's first page of GPUs has no serial")
    browser = await startChromium()

    const home: Array<{ readonly shownMs: number; readonly paintMs: number }> = []
    for (let run = 0; run < samples + 1; run++) {
      const page = await browser.newPage()
      home.push(await loadHome(page, origin))
      await page.close()
    }
    const [cold, ...warm] = home
    const searches: Array<number> = []
    const typed: Array<number> = []
    for (let run = 0; run < samples; run++) {
      const serial = serials[run % serials.length] ?? ""
      const page = await browser.newPage()
      searches.push(await loadSearch(page, origin, serial))
      await page.getByTestId("search").fill("")
      typed.push(await typeSearch(page, serials[(run + 1) % serials.length] ?? serial))
      await page.close()
    }
    return [
      `fleet page: gpu-serials demo --nodes ${demoNodes} (${status.body.gpus} GPUs on ${status.body.nodes} nodes, read in ${syncSeconds.toFixed(0)} s), headless Chromium`,
      `  / to its status line: first load ${(cold?.shownMs ?? 0).toFixed(0)} ms, then ${milliseconds(summarise(warm.map((load) => load.shownMs)))}; first contentful paint p50 ${summarise(warm.map((load) => load.paintMs)).medianMs.toFixed(0)} ms`,
      `  /?q=<serial> to its result row: ${milliseconds(summarise(searches))}`,
      `  a serial typed into the search box to its result row: ${milliseconds(summarise(typed))}`,
    ]
  } finally {
    await browser?.close()
    await service?.close()
  }
}
