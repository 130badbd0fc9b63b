import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { StringDecoder } from "node:string_decoder"
import { fileURLToPath } from "node:url"
import { Result } from "effect"
import { SaxesParser } from "saxes"
import { parseXmlReading, XmlReadingParser } from "../src/nvsmi/XmlReadingParser.ts"
import { parseXmlReadingWithSaxes } from "../test/nvsmi/SaxesReadingParser.ts"
import { againstBudget, minMedian, type Summary, sample } from "./Sampling.ts"

const fixtureDirectory = fileURLToPath(new URL("../../shared/fixtures/nvidia-smi/", import.meta.url))
const parseBudgetMs = 2
const chunkBytes = 16 * 1024
const largestFixtures = 4

interface ParseFigure {
  readonly name: string
  readonly bytes: number
  readonly gpus: number
  readonly whole: Summary
  readonly chunked: Summary
}

const parseWhole = (document: Buffer): number => {
  const reading = parseXmlReading(document)
  if (Result.isFailure(reading)) throw new Error(`benchmark document does not parse: ${reading.failure.message}`)
  return reading.success.gpus.length
}

const parseChunked = (document: Buffer): void => {
  const parser = new XmlReadingParser()
  for (let offset = 0; offset < document.length; offset += chunkBytes) {
    parser.write(document.subarray(offset, offset + chunkBytes))
  }
  if (Result.isFailure(parser.end())) throw new Error("benchmark document does not parse in chunks")
}

const measure = (name: string, document: Buffer): ParseFigure => {
  const gpus = parseWhole(document)
  const options = { warmupRuns: 200, runs: 2_000, maxMs: 4_000 }
  return {
    name,
    bytes: document.length,
    gpus,
    whole: sample(() => parseWhole(document), options),
    chunked: sample(() => parseChunked(document), options),
  }
}

/** The largest real `-q -x` capture, by size; none when the captures are not there. */
export const largestCapture = (): string | undefined => {
  if (!existsSync(fixtureDirectory)) return undefined
  const largest = readdirSync(fixtureDirectory)
    .filter((name) => name.endsWith(".xml"))
    .map((name) => ({ name, size: statSync(join(fixtureDirectory, name)).size }))
    .sort((a, b) => b.size - a.size)[0]
  return largest === undefined ? undefined : join(fixtureDirectory, largest.name)
}

const budgetBytes = 200 * 1024

const scannerRuns = 3
const scannerGoal = 0.6

const passSliceBytes = 32 * 1024

/**
 * saxes over the whole output with no handler but the error one, decoded and fed in 32 KiB slices as the
 * reader feeds its own (a string past V8's large-object threshold reads several times slower): the least a
 * reader built on saxes costs.
 */
const saxesPass = (document: Buffer): void => {
  const sax = new SaxesParser({ xmlns: false, position: false })
  sax.on("error", (error) => {
    throw error
  })
  const decoder = new StringDecoder("utf8")
  for (let offset = 0; offset < document.length; offset += passSliceBytes) {
    sax.write(decoder.write(document.subarray(offset, offset + passSliceBytes)))
  }
  sax.write(decoder.end())
  sax.close()
}

/** The same pass given the output as one string, as a plain use of saxes would. */
const saxesPassWhole = (document: Buffer): void => {
  const sax = new SaxesParser({ xmlns: false, position: false })
  sax.on("error", (error) => {
    throw error
  })
  sax.write(document.toString("utf8"))
  sax.close()
}

const parseWithSaxes = (document: Buffer): void => {
  if (Result.isFailure(parseXmlReadingWithSaxes(document))) throw new Error("benchmark document does not parse")
}

/**
 * The reading's parse of the largest capture (the scanner) against a no-op saxes pass over the same bytes,
 * and against the reader built on saxes it replaced: medians of each of 3 runs, the three interleaved,
 * printed as min / median of the runs.
 */
const scannerAgainstSaxes = (name: string, document: Buffer): ReadonlyArray<string> => {
  const options = { warmupRuns: 200, runs: 1_000, maxMs: 3_000 }
  const scanner: Array<number> = []
  const pass: Array<number> = []
  const saxesReader: Array<number> = []
  const wholePass: Array<number> = []
  for (let run = 0; run < scannerRuns; run++) {
    pass.push(sample(() => saxesPass(document), options).medianMs)
    wholePass.push(sample(() => saxesPassWhole(document), options).medianMs)
    scanner.push(sample(() => parseWhole(document), options).medianMs)
    saxesReader.push(sample(() => parseWithSaxes(document), options).medianMs)
  }
  const ratios = scanner.map((ms, run) => ms / (pass[run] ?? ms))
  const gains = scanner.map((ms, run) => (saxesReader[run] ?? ms) / ms)
  const wholeRatios = scanner.map((ms, run) => ms / (wholePass[run] ?? ms))
  return [
    `  scanner against saxes on ${name} (median of each run, min / median of ${scannerRuns} runs):`,
    `    parse (scanner) ${minMedian(scanner, 3)} ms, no-op saxes pass ${minMedian(pass, 3)} ms: ` +
      `${minMedian(ratios, 2)}× of the pass (goal ≤ ${scannerGoal}×, ${againstBudget(Math.min(...ratios), scannerGoal)} at the best run)`,
    `    the pass given the output as one string: ${minMedian(wholePass, 3)} ms, the scanner ${minMedian(wholeRatios, 2)}× of it`,
    `    per reading: ${minMedian(saxesReader, 3)} ms with the saxes reader before, ${minMedian(scanner, 3)} ms now ` +
      `(${minMedian(gains, 2)}× faster)`,
  ]
}

/** Parse time of the largest real `-q -x` captures: median of many runs, throughput, and the 2 ms budget. */
export const parseBench = (): ReadonlyArray<string> => {
  if (!existsSync(fixtureDirectory)) {
    return [`parse: the nvidia-smi captures are not at ${fixtureDirectory}; nothing measured`]
  }
  const documents = readdirSync(fixtureDirectory)
    .filter((name) => name.endsWith(".xml"))
    .map((name) => ({ name, size: statSync(join(fixtureDirectory, name)).size }))
    .sort((a, b) => b.size - a.size)
    .slice(0, largestFixtures)
  const lines = [
    `parse (-q -x, budget ${parseBudgetMs} ms median per document; whole buffer / fed in ${chunkBytes / 1024} KiB chunks)`,
  ]
  for (const [at, { name }] of documents.entries()) {
    const figure = measure(name, readFileSync(join(fixtureDirectory, name)))
    const megabytesPerSecond = figure.bytes / 1e6 / (figure.whole.medianMs / 1e3)
    lines.push(
      `  ${figure.name} (${(figure.bytes / 1024).toFixed(0)} KiB, ${figure.gpus} GPU): ` +
        `median ${figure.whole.medianMs.toFixed(3)} ms, p99 ${figure.whole.p99Ms.toFixed(3)} ms, ` +
        `${megabytesPerSecond.toFixed(0)} MB/s, ${againstBudget(figure.whole.medianMs, parseBudgetMs)}; ` +
        `chunked median ${figure.chunked.medianMs.toFixed(3)} ms (${figure.whole.runs} runs)`,
    )
    if (at === 0) {
      const perBudgetDocument = (figure.whole.medianMs * budgetBytes) / figure.bytes
      lines.push(
        `    largest capture per 200 KiB: ${perBudgetDocument.toFixed(3)} ms median, ${againstBudget(perBudgetDocument, parseBudgetMs)}`,
      )
    }
    if (at === documents.length - 1) {
      const largest = documents[0]
      if (largest !== undefined) {
        lines.push(...scannerAgainstSaxes(largest.name, readFileSync(join(fixtureDirectory, largest.name))))
      }
    }
  }
  return lines
}
