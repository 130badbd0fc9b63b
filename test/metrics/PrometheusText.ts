/** One sample line of a Prometheus text exposition. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

const unescapeLabelValue = (value: string): string =>
  value.replace(/\\(.)/g, (_escape, character: string) => (character === "n" ? "\n" : character))

const parseValue = (text: string): number => {
  if (text === "+Inf") return Number.POSITIVE_INFINITY
  if (text === "-Inf") return Number.NEGATIVE_INFINITY
  return Number(text)
}

/** The samples of an exposition (comments skipped); throws on a line that is not a sample. */
export const parseSamples = (exposition: string): ReadonlyArray<Sample> =>
  exposition
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = sampleLine.exec(line)
      if (match === null) throw new Error(`not a sample line: ${line}`)
      const labels: Record<string, string> = {}
      for (const pair of (match[2] ?? "").matchAll(labelPair)) labels[pair[1] ?? ""] = unescapeLabelValue(pair[2] ?? "")
      return { name: match[1] ?? "", labels, value: parseValue(match[3] ?? "") }
    })

/** The samples of one metric name, optionally only those carrying every given label. */
export const samplesOf = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): ReadonlyArray<Sample> =>
  samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )

/** The label names of every sample of `name`, each set sorted and written `a,b`. */
export const labelSets = (samples: ReadonlyArray<Sample>, name: string): ReadonlyArray<string> => [
  ...new Set(samplesOf(samples, name).map((sample) => Object.keys(sample.labels).sort().join(","))),
]
