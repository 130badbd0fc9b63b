/**
 * `npm run build`, after `tsc` has type-checked and compiled: bundles the command line (`bin/gpu-serials.ts`
 * and what it imports, the dependencies included; the types erased as Node erases them) into
 * `dist/bin/gpu-serials.js`, in place of `tsc`'s, and its chunks in `dist/bin/chunks/`, without the
 * dependencies' JSDoc. Each command, component and client library stays a chunk of its own, imported when
 * first needed as before. What it saves: V8 keeps every loaded module's source text as long as the process
 * lives, and the dependencies' JSDoc made most of it (docs/benchmarks.md, "The command line in one bundle,
 * and a list buffer a socket kept"). `dist/src/` stays as `tsc` wrote it: the package's library entry.
 * `dist/bin/modules.json` lists the packages in each chunk, so what a command loads can still be told.
 */
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const root = fileURLToPath(new URL("../", import.meta.url))
const entry = join(root, "bin", "gpu-serials.ts")
const chunks = join(root, "dist", "bin", "chunks")

rmSync(chunks, { recursive: true, force: true })
const bundled = await build({
  input: entry,
  platform: "node",
  // The simulated cluster is a development package, loaded by `demo` only and absent from the image.
  external: ["@gpu-serials/kube-sim"],
  logLevel: "warn",
  output: {
    dir: join(root, "dist", "bin"),
    entryFileNames: "gpu-serials.js",
    chunkFileNames: "chunks/[name]-[hash].js",
    format: "esm",
    // Licence notices stay; JSDoc and build annotations go.
    comments: { legal: true, annotation: false, jsdoc: false },
  },
})

/** The package a module of node_modules belongs to (`@scope/name` or `name`); undefined for the service's own. */
const packageOf = (moduleId: string): string | undefined => {
  const parts = moduleId.split("/node_modules/")
  if (parts.length < 2) return undefined
  // A package's own node_modules nests: the innermost folder holds the module.
  const [first = "", second = ""] = (parts.at(-1) ?? "").split("/")
  return first.startsWith("@") ? `${first}/${second}` : first
}

const packagesByChunk = Object.fromEntries(
  bundled.output
    .filter((file) => file.type === "chunk")
    .map((chunk) => [chunk.fileName, [...new Set(chunk.moduleIds.flatMap((id) => packageOf(id) ?? []))].sort()]),
)
writeFileSync(join(root, "dist", "bin", "modules.json"), `${JSON.stringify(packagesByChunk, null, 2)}\n`)
