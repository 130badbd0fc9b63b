import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"
import { ignores, pairsOf, stagesOf } from "./Dockerfile.ts"

const read = (path: string) => readFileSync(`${repositoryRoot}${path}`, "utf8")
const dockerfile = read("Dockerfile")
const stages = stagesOf(dockerfile)
const image = stages.at(-1)
const packageJson = JSON.parse(read("package.json")) as {
  version: string
  license: string
  bin: Record<string, string>
}
const ignorePatterns = read(".dockerignore")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"))

const instructionsOf = (stage: typeof image, instruction: string) =>
  (stage?.instructions ?? []).filter((candidate) => candidate.instruction === instruction).map((found) => found.text)

/** The sources of the COPY instructions that read the build context (not another stage). */
const contextSources = (stage: typeof image) =>
  instructionsOf(stage, "COPY")
    .filter((text) => !text.startsWith("--from="))
    .flatMap((text) => text.split(" ").slice(0, -1))

const PINNED = /^(?<name>[a-z0-9./-]+):(?<tag>[\w.-]+)@(?<digest>sha256:[0-9a-f]{64})$/

describe("Dockerfile", () => {
  it("builds in two stages from one base image, pinned by tag and digest", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage.from).toMatch(PINNED)
    expect(new Set(stages.map((stage) => stage.from)).size).toBe(1)
  })

  it("documents how to refresh the pinned digest, in a comment and in docs/deploy.md", () => {
    const { name, tag } = PINNED.exec(stages[0]?.from ?? "")?.groups ?? {}
    const refresh = `docker buildx imagetools inspect ${name}:${tag}`
    const comments = dockerfile.split("\n").filter((line) => line.startsWith("#"))
    expect(comments.some((line) => line.includes(refresh))).toBe(true)
    expect(read("docs/deploy.md")).toContain(refresh)
  })

  it("labels the image with the OCI annotations, its version and base matching the build", () => {
    const labels = pairsOf(instructionsOf(image, "LABEL").join(" "))
    const { name, tag, digest } = PINNED.exec(image?.from ?? "")?.groups ?? {}
    expect(labels).toMatchObject({
      "org.opencontainers.image.title": "gpu-serials",
      "org.opencontainers.image.version": packageJson.version,
      "org.opencontainers.image.licenses": packageJson.license,
      "org.opencontainers.image.base.name": `docker.io/library/${name}:${tag}`,
      "org.opencontainers.image.base.digest": digest,
    })
    for (const key of ["description", "revision", "created"]) {
      expect(labels[`org.opencontainers.image.${key}`], key).toBeTruthy()
    }
  })

  it("installs production dependencies only, without scripts, and cleans npm's cache in the same layer", () => {
    const installs = instructionsOf(image, "RUN").filter((text) => text.includes("npm ci"))
    expect(installs).toHaveLength(1)
    const install = installs[0] ?? ""
    expect(install).toContain("--omit=dev")
    expect(install).toContain("--ignore-scripts")
    expect(install).toMatch(/npm ci [^&]*&& npm cache clean --force/)
    expect(pairsOf(instructionsOf(image, "ENV").join(" ")).NODE_ENV).toBe("production")
  })

  it("ships the compiled output, the lockfile's production dependencies and the example config, nothing else", () => {
    expect([...contextSources(image)].sort()).toEqual(["config", "package-lock.json", "package.json"])
    const fromBuild = instructionsOf(image, "COPY").filter((text) => text.startsWith("--from="))
    expect(fromBuild).toEqual([`--from=${stages[0]?.name} /build/dist ./dist`])
    const entrypoint = JSON.parse(instructionsOf(image, "ENTRYPOINT")[0] ?? "[]") as ReadonlyArray<string>
    expect(entrypoint[0]).toBe("node")
    expect(entrypoint.at(-1)).toBe(packageJson.bin["gpu-serials"])
    // Between them only V8 heap options, each of which docs/benchmarks.md justifies.
    for (const flag of entrypoint.slice(1, -1)) {
      expect(flag).toMatch(/^--(max-semi-space-size|heap-growing-percent|max-old-space-size)=\d+$/)
      expect(read("docs/benchmarks.md"), flag).toContain(flag)
    }
  })

  it("preloads Debian's pinned jemalloc in one layer that leaves no package lists, one ENV line each as the benches read them, justified in docs/benchmarks.md", () => {
    const installs = instructionsOf(image, "RUN").filter((text) => text.includes("apt-get"))
    expect(installs).toHaveLength(1)
    const install = installs[0] ?? ""
    expect(install).toMatch(/apt-get install -y --no-install-recommends libjemalloc2=[\w.+~-]+ /)
    expect(install).toContain("rm -rf /var/lib/apt/lists/*")
    const link = /ln -s "\/usr\/lib\/\$\(uname -m\)-linux-gnu\/libjemalloc\.so\.2" (\S+)/.exec(install)?.[1]
    expect(link).toBe("/usr/local/lib/libjemalloc.so.2")
    const allocator = Object.entries(pairsOf(instructionsOf(image, "ENV").join(" "))).filter(
      ([name]) => name === "LD_PRELOAD" || name.startsWith("MALLOC_"),
    )
    expect(allocator).toEqual([
      ["LD_PRELOAD", link],
      ["MALLOC_CONF", "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0"],
    ])
    // After the install, so that apt-get does not run with a library that is not there yet.
    const order = (image?.instructions ?? []).map((found) => found.text)
    expect(order.indexOf(install)).toBeLessThan(order.findIndex((text) => text.startsWith("LD_PRELOAD=")))
    for (const [name, value] of allocator) {
      expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, "m"))
    }
    expect(read("docs/benchmarks.md")).toContain("MALLOC_CONF=narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0")
  })

  it("compiles every folder the build's tsconfig includes, with the types of the demo's simulated cluster", () => {
    const include = (JSON.parse(read("tsconfig.build.json")) as { include: ReadonlyArray<string> }).include
    const copied = contextSources(stages[0])
    for (const folder of [...include, "packages/kube-sim/src", "packages/kube-sim/package.json"]) {
      expect(copied, folder).toContain(folder)
    }
  })

  it("copies every script the build runs into the build stage", () => {
    const manifest = JSON.parse(read("package.json")) as { scripts: Readonly<Record<string, string>> }
    const scripts = [...(manifest.scripts.build ?? "").matchAll(/\bnode (scripts\/\S+)/g)].map((match) => match[1])
    expect(scripts).toContain("scripts/bundle-cli.ts")
    const copied = contextSources(stages[0])
    for (const script of scripts) expect(copied, script).toContain(script)
  })

  it("runs as a non-root numeric user, so the kubelet can check runAsNonRoot", () => {
    const user = instructionsOf(image, "USER").at(-1) ?? ""
    expect(user).toMatch(/^\d+(:\d+)?$/)
    expect(Number(user.split(":")[0])).toBeGreaterThan(0)
  })
})

describe(".dockerignore", () => {
  it("keeps local installs, builds, history, tests and local secrets out of the build context", () => {
    for (const path of [
      "node_modules",
      "dist",
      ".git",
      "test",
      "bench",
      ".env",
      ".env.production",
      "packages/kube-sim/test",
    ]) {
      expect(
        ignorePatterns.some((pattern) => ignores(pattern, path)),
        path,
      ).toBe(true)
    }
  })

  it("leaves in everything the Dockerfile copies from the build context", () => {
    for (const source of stages.flatMap(contextSources)) {
      expect(
        ignorePatterns.filter((pattern) => ignores(pattern, source)),
        source,
      ).toEqual([])
    }
  })
})
