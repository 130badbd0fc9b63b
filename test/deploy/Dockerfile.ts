/** One instruction of a Dockerfile: `RUN a \` + `  b` is `{ instruction: "RUN", text: "a b" }`. */
export interface Instruction {
  readonly instruction: string
  readonly text: string
}

/** A build stage: its FROM and the instructions up to the next FROM. */
export interface Stage {
  readonly from: string
  readonly name?: string
  readonly instructions: ReadonlyArray<Instruction>
}

/** The stages of a Dockerfile, with continuation lines joined and comments left out. */
export const stagesOf = (dockerfile: string): ReadonlyArray<Stage> => {
  const logicalLines = dockerfile
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replaceAll(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
  const stages: Array<{ from: string; name?: string; instructions: Array<Instruction> }> = []
  for (const line of logicalLines) {
    const [word = "", ...rest] = line.split(/\s+/)
    const instruction = word.toUpperCase()
    const text = rest.join(" ")
    if (instruction === "FROM") {
      const [image = "", as, name] = text.split(" ")
      stages.push({
        from: image,
        ...(as?.toUpperCase() === "AS" && name !== undefined ? { name } : {}),
        instructions: [],
      })
    } else {
      stages.at(-1)?.instructions.push({ instruction, text })
    }
  }
  return stages
}

/** `key="value" key2=value2` of a LABEL or ENV instruction. */
export const pairsOf = (text: string): Readonly<Record<string, string>> =>
  Object.fromEntries(
    [...text.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)].map((match) => [
      match[1] ?? "",
      (match[2] ?? "").replace(/^"(.*)"$/, "$1"),
    ]),
  )

/** Whether a .dockerignore pattern leaves out `path` or a folder above it (`*` within a path segment). */
export const ignores = (pattern: string, path: string): boolean => {
  const expression = new RegExp(
    `^${pattern
      .replace(/\/$/, "")
      .split("*")
      .map((part) => part.replaceAll(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join("[^/]*")}(/.*)?$`,
  )
  return expression.test(path)
}
