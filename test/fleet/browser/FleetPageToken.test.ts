import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./Eventually.ts"
import { type FleetService, type GpuList, startSimulatedFleet } from "./FleetService.ts"
import { type HeadlessChromium, startChromium } from "./HeadlessChromium.ts"

const token = "fleet-page-test-token-7c1e"

let service: FleetService
let browser: HeadlessChromium

beforeAll(async () => {
  service = await startSimulatedFleet({ nodes: 2, seed: "fleet-token", token })
  browser = await startChromium()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await service?.close()
})

describe("the fleet page with FLEET_TOKEN set", () => {
  it("serves the page to anyone, and the API only with the bearer token; probes stay open", async () => {
    const anonymous = (path: string) => fetch(`${service.origin}${path}`, { signal: AbortSignal.timeout(10_000) })
    expect((await anonymous("/")).status).toBe(200)
    const refused = await anonymous("/api/v1/gpus")
    expect(refused.status).toBe(401)
    const body = (await refused.json()) as { readonly error: string; readonly message: string }
    expect(body.error).toBe("unauthorized")
    expect(JSON.stringify(body)).not.toContain(token)
    expect((await anonymous("/healthz")).status).toBe(200)
    expect((await anonymous("/metrics")).status).toBe(200)
    expect((await service.api<GpuList>("/api/v1/gpus")).status).toBe(200)
  })

  it("prompts for the token, then searches with it", async () => {
    const gpu = (await service.api<GpuList>("/api/v1/gpus")).body.items.find((item) => item.gpu !== "")
    if (gpu === undefined) throw new Error("no GPU with a serial in the fleet")
    const page = await browser.newPage()
    await page.goto(`${service.origin}/?q=${encodeURIComponent(gpu.gpu)}`)
    // The prompt: a labelled password field, shown once the API answers 401.
    const prompt = page.locator('input[type="password"]')
    await prompt.waitFor()
    expect(await prompt.evaluate((input) => (input as unknown as { labels: { length: number } }).labels.length)).toBe(1)
    expect(await page.getByTestId("result-row").count()).toBe(0)
    await prompt.fill(token)
    await prompt.press("Enter")
    const row = page.getByTestId("result-row").filter({ hasText: gpu.gpu })
    await eventually(() => row.count()).toBeGreaterThan(0)
    expect(await row.first().textContent()).toContain(gpu.node)
    expect(page.url()).not.toContain(token)
    expect(await page.content()).not.toContain(token)
    const outside = browser
      .requests()
      .filter((url) => !url.startsWith("data:") && new URL(url).origin !== service.origin)
    expect(outside).toEqual([])
    await page.close()
  })
})
