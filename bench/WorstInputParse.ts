import { readFileSync } from "node:fs"
import { Result } from "effect"
import { XmlReadingParser } from "../src/nvsmi/XmlReadingParser.ts"

/**
 * Parses one document, fed in exec-sized chunks as the service does, in a process of its own so that
 * its peak RSS is the parse's. Prints `{ ms, rssBeforeMb, peakRssMb, outcome }` as one JSON line.
 */
const chunkBytes = 16 * 1024
const path = process.argv[2]
if (path === undefined) throw new Error("usage: WorstInputParse.ts FILE")
const document = readFileSync(path)

/** A memory figure of this process from /proc, in megabytes: `VmRSS` now or `VmHWM` (the peak so far). */
const statusMegabytes = (field: "VmRSS" | "VmHWM"): number => {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${field}:`))
  return Number(line?.replace(/\D+/g, "") ?? 0) / 1024
}

const rssBeforeMb = statusMegabytes("VmRSS")
const started = performance.now()
const parser = new XmlReadingParser()
for (let offset = 0; offset < document.length; offset += chunkBytes) {
  parser.write(document.subarray(offset, offset + chunkBytes))
}
const reading = parser.end()
const ms = performance.now() - started
const outcome = Result.isFailure(reading)
  ? `${reading.failure.kind} (message ${reading.failure.message.length} chars)`
  : `${reading.success.gpus.length} GPUs, ${reading.success.failures.length} failures`
process.stdout.write(`${JSON.stringify({ ms, rssBeforeMb, peakRssMb: statusMegabytes("VmHWM"), outcome })}\n`)
