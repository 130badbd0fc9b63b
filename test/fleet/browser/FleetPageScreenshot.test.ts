import { mkdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repositoryRoot } from "../../cli/GpuSerialsCli.ts"
import { eventually } from "./Eventually.ts"
import { type FleetService, type GpuList, startDemo } from "./FleetService.ts"
import { type HeadlessChromium, startChromium } from "./HeadlessChromium.ts"

/** Git-ignored: the screenshot of each run. docs/fleet-page.png, for the README, is a copy of one. */
const artifacts = join(repositoryRoot, "test-results")

let service: FleetService
let browser: HeadlessChromium

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  service = await startDemo()
  browser = await startChromium({ viewport: { width: 1280, height: 800 } })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
})

describe("the fleet page against gpu-serials demo", () => {
  it("shows an NVL72 tray's GPUs by chassis, and writes a screenshot of it to test-results/", async () => {
    const list = await service.api<GpuList>("/api/v1/gpus?model=GB200&limit=1000")
    const tray = list.body.items.find((item) => item.chassis !== "")
    if (tray === undefined) throw new Error("the demo has no GPU in an NVL tray")
    const page = await browser.newPage()
    await page.goto(`${service.origin}/?q=${encodeURIComponent(tray.chassis)}`)
    const rows = page.getByTestId("result-row")
    const inChassis = list.body.items.filter((item) => item.chassis === tray.chassis).length
    await eventually(() => rows.count()).toBe(Math.min(inChassis, 100))
    expect(await rows.first().textContent()).toContain(tray.chassis)
    const path = join(artifacts, "fleet-page.png")
    await page.screenshot({ path, fullPage: false })
    expect(statSync(path).size).toBeGreaterThan(10_000)
    await page.close()
  })

  it("follows the system's colour scheme: dark has another background than light", async () => {
    const page = await browser.newPage()
    await page.goto(`${service.origin}/`)
    await page.getByTestId("search").waitFor()
    const background = () =>
      page.evaluate<string>(
        "getComputedStyle(document.documentElement).backgroundColor + ' ' + getComputedStyle(document.body).backgroundColor",
      )
    await page.emulateMedia({ colorScheme: "light" })
    const light = await background()
    await page.emulateMedia({ colorScheme: "dark" })
    const dark = await background()
    expect(dark).not.toBe(light)
    await page.screenshot({ path: join(artifacts, "fleet-page-dark.png") })
    await page.close()
  })

  it("made no request outside the service", () => {
    const outside = browser
      .requests()
      .filter((url) => !url.startsWith("data:") && new URL(url).origin !== service.origin)
    expect(outside).toEqual([])
  })
})
