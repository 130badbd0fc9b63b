import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const repositoryRoot = fileURLToPath(new URL("..", import.meta.url))

/**
 * The Markdown without its fenced code blocks, whose `#` lines and brackets are not headings or links,
 * and the line of a fence left open (which would hide the rest of the page).
 */
const withoutFences = (markdown: string): { readonly prose: string; readonly unclosedAt?: number } => {
  let fence: { readonly marker: string; readonly line: number } | undefined
  const prose = markdown
    .split("\n")
    .map((line, index) => {
      const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
      if (fence === undefined && marker !== undefined) {
        fence = { marker, line: index + 1 }
        return ""
      }
      if (fence !== undefined) {
        if (line.trim().startsWith(fence.marker)) fence = undefined
        return ""
      }
      return line
    })
    .join("\n")
  return fence === undefined ? { prose } : { prose, unclosedAt: fence.line }
}

/** GitHub's anchor of a heading: lowercase, spaces to `-`, punctuation other than `-` and `_` dropped. */
const anchorOf = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replaceAll("`", "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

/** Every anchor of a page, a repeated heading numbered as GitHub numbers it (`-1`, `-2`). */
const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  for (const [, heading = ""] of withoutFences(markdown).prose.matchAll(
    /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm,
  )) {
    const anchor = anchorOf(heading)
    let unique = anchor
    for (let repeat = 1; anchors.has(unique); repeat++) unique = `${anchor}-${repeat}`
    anchors.add(unique)
  }
  return anchors
}

/** The targets of a page's inline links and link definitions, outside code. */
const linkTargetsOf = (markdown: string): ReadonlyArray<string> => {
  const prose = withoutFences(markdown).prose.replace(/(`+)[\s\S]*?\1/g, "code")
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? "")
  const definitions = [...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] ?? "")
  return [...inline, ...definitions]
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")

/** The relative links of the page at `path` (under `root`) whose file, or whose heading, does not exist. */
const brokenLinks = (root: string, path: string): ReadonlyArray<string> => {
  const markdown = readFileSync(join(root, path), "utf8")
  const links = linkTargetsOf(markdown).flatMap((target) => {
    if (target === "" || isExternal(target)) return []
    const [file = "", anchor] = target.split("#", 2)
    const decoded = decodeURIComponent(file)
    const absolute =
      decoded === ""
        ? join(root, path)
        : decoded.startsWith("/")
          ? join(root, decoded)
          : resolve(dirname(join(root, path)), decoded)
    if (!existsSync(absolute)) return [`${target}: no file ${relative(root, absolute)}`]
    if (anchor === undefined || !absolute.endsWith(".md")) return []
    const anchors = anchorsOf(readFileSync(absolute, "utf8"))
    return anchors.has(decodeURIComponent(anchor))
      ? []
      : [`${target}: no heading #${anchor} in ${relative(root, absolute)}`]
  })
  const { unclosedAt } = withoutFences(markdown)
  return unclosedAt === undefined ? links : [`the code block opened at line ${unclosedAt} never closes`, ...links]
}

const markdownUnder = (root: string, folder: string): Array<string> =>
  readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return markdownUnder(root, path)
    return entry.name.endsWith(".md") ? [path] : []
  })

const pages = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", ...markdownUnder(repositoryRoot, "docs")]

describe("the documentation's links", () => {
  it.each(pages)("%s links only to files and headings that exist", (page) => {
    expect(brokenLinks(repositoryRoot, page)).toEqual([])
  })

  it("covers every page of docs/, the exporters' included", () => {
    expect(pages).toEqual(expect.arrayContaining(["docs/configuration.md", "docs/exporters/otlp.md"]))
  })
})

describe("the link check", () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-serials-docs-"))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  mkdirSync(join(root, "docs"))
  writeFileSync(
    join(root, "docs", "page.md"),
    [
      "# A page",
      "## Run the service: `gpu-serials run`",
      "## The record: `gpu-serials/v1`",
      "## As the inventory's store",
      "## Notes",
      "## Notes",
      "```sh",
      "# not a heading, and [not a link](missing.md)",
      "```",
    ].join("\n"),
  )
  const linking = (links: ReadonlyArray<string>) => {
    writeFileSync(join(root, "README.md"), links.map((link) => `See [there](${link}).`).join("\n"))
    return brokenLinks(root, "README.md")
  }

  it("finds the files and headings a link names, as GitHub spells their anchors", () => {
    expect(
      linking([
        "docs/page.md",
        "docs/page.md#run-the-service-gpu-serials-run",
        "docs/page.md#the-record-gpu-serialsv1",
        "docs/page.md#as-the-inventorys-store",
        "docs/page.md#notes-1",
        "./docs/",
        "https://example.com/missing.md",
      ]),
    ).toEqual([])
  })

  it("reports a missing file, a missing heading and a heading inside a code block", () => {
    expect(linking(["docs/gone.md", "docs/page.md#run-the-service", "docs/page.md#not-a-heading"])).toEqual([
      "docs/gone.md: no file docs/gone.md",
      "docs/page.md#run-the-service: no heading #run-the-service in docs/page.md",
      "docs/page.md#not-a-heading: no heading #not-a-heading in docs/page.md",
    ])
  })

  it("reports a code block that never closes, which would hide the rest of the page", () => {
    writeFileSync(join(root, "README.md"), "# Top\n\n```sh\nnpm test\n\n[hidden](gone.md)\n")
    expect(brokenLinks(root, "README.md")).toEqual(["the code block opened at line 3 never closes"])
  })

  it("checks an anchor of the page itself, and ignores links inside code", () => {
    writeFileSync(join(root, "README.md"), "# Top\n\n[up](#top) [down](#bottom) `[code](gone.md)`\n")
    expect(brokenLinks(root, "README.md")).toEqual(["#bottom: no heading #bottom in README.md"])
  })
})
