import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./Eventually.ts"
import { type FleetService, type GpuItem, type GpuList, startSimulatedFleet, until } from "./FleetService.ts"
import { type HeadlessChromium, startChromium } from "./HeadlessChromium.ts"

/** The page's Content-Security-Policy, as the API contract sets it. */
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

let service: FleetService
let browser: HeadlessChromium

beforeAll(async () => {
  service = await startSimulatedFleet({ nodes: 5, seed: "fleet-page" })
  browser = await startChromium()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
})

const open = async (path: string): Promise<Page> => {
  const page = await browser.newPage()
  await page.goto(`${service.origin}${path}`)
  return page
}

const gpuWithSerial = async (node?: string): Promise<GpuItem> => {
  const list = await service.api<GpuList>(`/api/v1/gpus?limit=1000${node === undefined ? "" : `&node=${node}`}`)
  const gpu = list.body.items.find((item) => item.gpu !== "")
  if (gpu === undefined) throw new Error("no GPU with a serial in the fleet")
  return gpu
}

describe("the fleet page in headless Chromium", () => {
  it("finds a serial as it is typed and shows its node", async () => {
    const gpu = await gpuWithSerial()
    const page = await open("/")
    // The two GPUs of a GB200 module share their serial: one row each.
    const sharing = (await service.api<GpuList>(`/api/v1/gpus?serial=${encodeURIComponent(gpu.gpu)}`)).body.total
    await page.getByTestId("search").pressSequentially(gpu.gpu, { delay: 20 })
    const rows = page.getByTestId("result-row")
    await eventually(() => rows.count()).toBe(sharing)
    expect(await rows.filter({ hasText: gpu.gpu }).count()).toBe(sharing)
    expect(page.url()).toBe(`${service.origin}/?q=${gpu.gpu}`)
    expect(await rows.first().textContent()).toContain(gpu.node)
    await page.close()
  })

  it("opened at /?q=<serial> shows that serial's node, and the API returns the same GPU", async () => {
    const gpu = await gpuWithSerial()
    const page = await open(`/?q=${encodeURIComponent(gpu.gpu)}`)
    await eventually(() => page.getByTestId("search").inputValue()).toBe(gpu.gpu)
    const answer = await service.api<GpuList>(`/api/v1/gpus?serial=${encodeURIComponent(gpu.gpu)}`)
    expect(answer.status).toBe(200)
    expect(answer.body.items.map((item) => item.uuid)).toContain(gpu.uuid)
    const row = page.getByTestId("result-row").filter({ hasText: gpu.gpu })
    await eventually(() => row.count()).toBe(answer.body.total)
    expect(await row.first().textContent()).toContain(gpu.node)
    await page.close()
  })

  it("opens a node from a search result: its GPUs by index, with PCI bus IDs", async () => {
    const nodeName = service.cluster?.nodeNames()[0] ?? ""
    const node = await service.api<{ readonly gpus: ReadonlyArray<GpuItem> }>(
      `/api/v1/nodes/${encodeURIComponent(nodeName)}`,
    )
    expect(node.status).toBe(200)
    const page = await open(`/?q=${encodeURIComponent(nodeName)}`)
    const row = page.getByTestId("result-row").first()
    await row.waitFor()
    await row
      .locator(`a[href$="/nodes/${encodeURIComponent(nodeName)}"]`)
      .first()
      .click()
    await page.waitForURL(`${service.origin}/nodes/${encodeURIComponent(nodeName)}`)
    const view = page.getByTestId("node-view")
    const byIndex = [...node.body.gpus].sort((a, b) => a.index - b.index)
    expect(byIndex.length).toBeGreaterThan(0)
    const last = byIndex.at(-1)
    await eventually(() => view.textContent()).toContain(last?.pciBusId ?? last?.uuid)
    const text = (await view.textContent()) ?? ""
    expect(text).toContain(nodeName)
    const positions = byIndex.map((gpu) => text.indexOf(gpu.pciBusId ?? gpu.uuid))
    expect(positions.every((position) => position >= 0)).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    await page.close()
  })

  it("shows a GPU swapped between nodes as a move in the recent events and in its history", async () => {
    const cluster = service.cluster
    if (cluster === undefined) throw new Error("the test owns no cluster")
    const [first, second] = cluster.nodeNames().filter((name) => cluster.node(name)?.model === "h100-hgx")
    if (first === undefined || second === undefined) throw new Error("the fleet has fewer than two HGX nodes")
    const moved = cluster.swapGpus(first, second, { index: 1 })
    const uuid = moved.find((candidate) => cluster.node(second)?.gpus.some((gpu) => gpu.uuid === candidate))
    if (uuid === undefined) throw new Error("no GPU moved to the second node")
    await until(`the API has ${uuid} on ${second}`, async () => {
      const answer = await service.api<GpuItem>(`/api/v1/gpus/${uuid}`)
      return answer.status === 200 && answer.body.node === second
    })
    const serial = (await service.api<GpuItem>(`/api/v1/gpus/${uuid}`)).body.gpu

    const page = await open("/")
    // The home view shows the recent moves, removals and health changes, and refreshes them.
    const events = page.getByTestId("event-row")
    const move = events.filter({ hasText: /moved/i }).filter({ hasText: serial === "" ? uuid : serial })
    await eventually(() => move.count()).toBeGreaterThan(0)
    expect(await move.first().textContent()).toContain(second)

    await page.goto(`${service.origin}/gpus/${uuid}`)
    const history = page.getByTestId("history-row").filter({ hasText: /moved/i })
    await eventually(() => history.count()).toBeGreaterThan(0)
    const entry = await history.first().textContent()
    expect(entry).toContain(second)
    expect(entry).toContain(first)
    await page.close()
  })

  it("lists a failed GPU and a failing node among the suspects", async () => {
    const cluster = service.cluster
    if (cluster === undefined) throw new Error("the test owns no cluster")
    const broken = cluster.nodeNames().find((name) => cluster.node(name)?.model === "t4") ?? ""
    cluster.setDriverFailure(broken, "driver-not-loaded")
    cluster.faults.setRates({ healthFaultsPerGpuMinute: 2, healthStageSeconds: 30 })
    let failed: GpuItem | undefined
    await until(
      "a GPU reads failed",
      async () => {
        failed = (await service.api<GpuList>("/api/v1/gpus?health=failed")).body.items[0]
        return failed !== undefined
      },
      60_000,
    )
    cluster.faults.setRates({ healthFaultsPerGpuMinute: 0 })
    await until("the broken node's reading fails", async () => {
      const answer = await service.api<{ readonly items: ReadonlyArray<{ readonly name: string }> }>(
        "/api/v1/nodes?failing=true",
      )
      return answer.body.items.some((node) => node.name === broken)
    })

    const page = await open("/")
    // The home view shows the suspects, and refreshes them.
    const suspects = page.getByTestId("suspect-row")
    const gpu = failed as GpuItem
    await expect
      .poll(() => suspects.filter({ hasText: gpu.gpu === "" ? gpu.uuid : gpu.gpu }).count())
      .toBeGreaterThan(0)
    await eventually(() => suspects.filter({ hasText: broken }).count()).toBeGreaterThan(0)
    await page.close()
    cluster.faults.clear()
  }, 90_000)

  it("is reachable with Tab: the search box comes into focus and has a label", async () => {
    const page = await open("/")
    await page.getByTestId("search").waitFor()
    let focused = false
    for (let presses = 0; presses < 20 && !focused; presses++) {
      await page.keyboard.press("Tab")
      focused = await page.evaluate<boolean>('document.activeElement?.getAttribute("data-testid") === "search"')
    }
    expect(focused).toBe(true)
    // The input's accessible name: its <label> elements, aria-labelledby's elements, aria-label.
    const label = await page.evaluate<string>(`(() => {
      const input = document.querySelector('[data-testid="search"]')
      const byFor = [...(input.labels ?? [])].map((element) => element.textContent).join(" ")
      const byId = (input.getAttribute("aria-labelledby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
      return (byFor + " " + byId + " " + (input.getAttribute("aria-label") ?? "")).trim()
    })()`)
    expect(label).not.toBe("")
    await page.close()
  })

  it("is served with the strict Content-Security-Policy and runs no inline script or style", async () => {
    const page = await browser.newPage()
    const response = await page.goto(`${service.origin}/`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toBe(contentSecurityPolicy)
    await page.getByTestId("search").waitFor()
    const inline = await page.evaluate<{ scripts: number; styles: number }>(`({
      scripts: [...document.querySelectorAll("script")].filter((script) => !script.src).length,
      styles: document.querySelectorAll("style").length,
    })`)
    expect(inline).toEqual({ scripts: 0, styles: 0 })
    await page.close()
  })

  it("broke no Content-Security-Policy rule in any of these tests", () => {
    expect(browser.consoleErrors().filter((message) => /Content Security Policy/i.test(message))).toEqual([])
  })

  it("made no request outside the service in any of these tests", () => {
    const requests = browser.requests()
    expect(requests.length).toBeGreaterThan(0)
    const outside = requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== service.origin)
    expect(outside).toEqual([])
  })
})
