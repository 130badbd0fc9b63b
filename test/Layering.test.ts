import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = fileURLToPath(new URL("../src", import.meta.url))

/**
 * The top-level folders of `src/` by rank, lowest first: a folder may import only folders of a lower rank,
 * so no two folders import each other, even through a third. The components share one rank: a receiver,
 * a processor and an exporter know each other only through the contracts below them.
 */
const ranks: ReadonlyArray<ReadonlyArray<string>> = [
  ["domain"],
  ["nvsmi"],
  ["log"],
  ["component"],
  ["pipeline"],
  ["config"],
  ["metrics"],
  ["fleet"],
  ["health"],
  ["kubeclient", "natsclient"],
  ["receiver", "processor", "exporter"],
  ["service"],
  ["cli"],
]
const layers = ranks.flat()

const relativeImport = /(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g

const sourceFiles = (folder: string): Array<string> =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

/** The top-level folder of `src/` a path lies in, or undefined for `src/index.ts` and paths outside. */
const layerOf = (path: string): string | undefined => {
  const parts = relative(src, path).split(sep)
  return parts.length > 1 && parts[0] !== ".." ? parts[0] : undefined
}

interface FolderImport {
  readonly file: string
  readonly from: string
  readonly to: string
}

const folderImports = (): Array<FolderImport> =>
  sourceFiles(src).flatMap((file) => {
    const from = layerOf(file)
    if (from === undefined) return []
    return [...readFileSync(file, "utf8").matchAll(relativeImport)].flatMap((match) => {
      const to = layerOf(normalize(join(dirname(file), match[1] ?? "")))
      return to === undefined || to === from ? [] : [{ file: relative(src, file), from, to }]
    })
  })

describe("the folders of src/", () => {
  it("are all placed in the layers", () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
    expect(folders.sort()).toEqual([...layers].sort())
  })

  it("import only lower layers", () => {
    const imports = folderImports()
    expect(imports.length).toBeGreaterThan(100)
    const rank = (layer: string): number => ranks.findIndex((folders) => folders.includes(layer))
    const upward = imports
      .filter((folderImport) => rank(folderImport.to) >= rank(folderImport.from))
      .map((folderImport) => `${folderImport.file} imports ${folderImport.to}`)
    expect(upward).toEqual([])
  })

  it("keep the components apart: no receiver, processor or exporter imports another of them", () => {
    const components = ["receiver", "processor", "exporter"]
    const sideways = folderImports()
      .filter((folderImport) => components.includes(folderImport.from) && components.includes(folderImport.to))
      .map((folderImport) => `${folderImport.file} imports ${folderImport.to}`)
    expect(sideways).toEqual([])
  })

  it("keep the Kubernetes client free of the components and the service", () => {
    const above = ["receiver", "processor", "exporter", "service", "cli"]
    const outside = folderImports()
      .filter((folderImport) => folderImport.from === "kubeclient" && above.includes(folderImport.to))
      .map((folderImport) => `${folderImport.file} imports ${folderImport.to}`)
    expect(outside).toEqual([])
  })

  it("keep the component contract free of the rest of the product", () => {
    const outside = folderImports()
      .filter((folderImport) => folderImport.from === "component")
      .map((folderImport) => `${folderImport.file} imports ${folderImport.to}`)
    expect(outside).toEqual([])
  })
})
