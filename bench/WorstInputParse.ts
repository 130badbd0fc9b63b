import { readFileSync } from "node:fs"
import { Result } from "effect"
import { parseCsvReading } from "../src/nvsmi/CsvReadingParser.ts"
import { XmlReadingParser } from "../src/nvsmi/XmlReadingParser.ts"

/**
 * Parses one output as the service does (XML fed in exec-sized chunks, CSV as the text it kept), in a
 * process of its own so that its peak RSS is the parse's. Prints `{ ms, rssBeforeMb, peakRssMb, outcome }`
 * as one JSON line.
 */
const chunkBytes = 16 * 1024
const [path, format] = process.argv.slice(2)
if (path === undefined || (format !== "xml" && format !== "csv")) {
  throw new Error("usage: WorstInputParse.ts FILE xml|csv")
}
const document = readFileSync(path)

/** A memory figure of this process from /proc, in megabytes: `VmRSS` now or `VmHWM` (the peak so far). */
const statusMegabytes = (field: "VmRSS" | "VmHWM"): number => {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${field}:`))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

const rssBeforeMb = statusMegabytes("VmRSS")
const parseXml = () => {
  const parser = new XmlReadingParser()
  for (let offset = 0; offset < document.length; offset += chunkBytes) {
    parser.write(document.subarray(offset, offset + chunkBytes))
  }
  return parser.end()
}

const started = performance.now()
const reading = format === "xml" ? parseXml() : parseCsvReading(document.toString("utf8"))
const ms = performance.now() - started
const outcome = Result.isFailure(reading)
  ? `${reading.failure.kind} (message ${reading.failure.message.length} chars)`
  : `${reading.success.gpus.length} GPUs, ${reading.success.failures.length} failures`
process.stdout.write(`${JSON.stringify({ ms, rssBeforeMb, peakRssMb: statusMegabytes("VmHWM"), outcome })}\n`)
