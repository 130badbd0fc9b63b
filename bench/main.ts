import { cpus } from "node:os"
import { parseBench } from "./ParseBench.ts"

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, node ${process.versions.node}`

process.stdout.write(`gpu-serials benchmarks on ${machine}\n\n`)
for (const line of parseBench()) process.stdout.write(`${line}\n`)
