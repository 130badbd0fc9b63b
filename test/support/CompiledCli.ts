import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))

/** The compiled entry point the package ships, relative to the repository root (`npm run build` writes it). */
export const compiledCliPath = "dist/bin/gpu-serials.js"

const modifiedMs = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

const sourceFiles = (folder: string): ReadonlyArray<string> =>
  readdirSync(join(repositoryRoot, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(folder, name))

/** Sources of the fleet page, which `npm run build` compiles for the browser into `dist/fleet-page/`. */
const fleetPageSources = join("src", "fleet", "page")

/**
 * The compiled twin of a source file (`src/cli/Main.ts` → `dist/src/cli/Main.js`; the fleet page's
 * `src/fleet/page/fleet.ts` → `dist/fleet-page/fleet.js`).
 */
const compiledOf = (source: string): string =>
  source.startsWith(`${fleetPageSources}/`)
    ? join("dist", "fleet-page", source.slice(fleetPageSources.length + 1).replace(/\.ts$/, ".js"))
    : join("dist", source.replace(/\.ts$/, ".js"))

/**
 * The first source whose compiled file is missing or older than it, with that compiled file; nothing
 * when `dist/` is up to date. `package.json` counts: the compiled CLI reads its version from a copy.
 */
export const staleCompiledFile = (): { readonly source: string; readonly compiled: string } | undefined => {
  const pairs = [
    ...["src", "bin"].flatMap(sourceFiles).map((source) => ({ source, compiled: compiledOf(source) })),
    { source: "package.json", compiled: "dist/package.json" },
  ]
  return pairs.find(({ source, compiled }) => {
    const compiledMs = modifiedMs(join(repositoryRoot, compiled))
    return compiledMs === undefined || compiledMs < (modifiedMs(join(repositoryRoot, source)) ?? 0)
  })
}

let checked = false

/**
 * The compiled CLI, checked to be built from the sources as they are now: CLI and benchmark processes run
 * what ships. Fails with what to do when `dist/` is missing or older than a source.
 */
export const upToDateCompiledCli = (): string => {
  if (checked) return compiledCliPath
  const stale = staleCompiledFile()
  if (stale !== undefined) {
    const problem =
      modifiedMs(join(repositoryRoot, stale.compiled)) === undefined
        ? `${stale.compiled} is missing`
        : `${stale.compiled} is older than ${stale.source}`
    throw new Error(`the compiled CLI is out of date (${problem}): run \`npm run build\` (npm test builds first)`)
  }
  checked = true
  return compiledCliPath
}
