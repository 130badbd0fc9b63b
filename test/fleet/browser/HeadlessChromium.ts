import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it); playwright-core never downloads one. */
export const chromiumPath = "/usr/bin/chromium"

/** Headless, and quiet: no background, component, sync or QUIC traffic of its own that could pass for the page's. */
const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
]

/** A headless Chromium with a fresh profile, and every request its pages made, in order. */
export interface HeadlessChromium {
  readonly context: BrowserContext
  /** URLs of every request any page of this browser made so far. */
  readonly requests: () => ReadonlyArray<string>
  /** Every console error of its pages so far (Content-Security-Policy violations among them). */
  readonly consoleErrors: () => ReadonlyArray<string>
  readonly newPage: () => Promise<Page>
  readonly close: () => Promise<void>
}

export const startChromium = async (
  options: { readonly colorScheme?: "light" | "dark"; readonly viewport?: { width: number; height: number } } = {},
): Promise<HeadlessChromium> => {
  const profile = mkdtempSync(join(tmpdir(), "gpu-serials-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    colorScheme: options.colorScheme ?? "light",
    viewport: options.viewport ?? { width: 1280, height: 800 },
    timeout: 30_000,
  })
  context.setDefaultTimeout(15_000)
  const requests: Array<string> = []
  context.on("request", (request) => {
    requests.push(request.url())
  })
  const consoleErrors: Array<string> = []
  context.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text())
  })
  return {
    context,
    requests: () => [...requests],
    consoleErrors: () => [...consoleErrors],
    newPage: () => context.newPage(),
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
