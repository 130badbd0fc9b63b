import { cpus } from "node:os"
import { httpBench } from "./HttpBench.ts"
import { inventoryBench } from "./InventoryBench.ts"
import { natsBench } from "./NatsBench.ts"
import { otlpBench } from "./OtlpBench.ts"
import { parseBench } from "./ParseBench.ts"
import { pipelineBench, pipelineScenarios } from "./PipelineBench.ts"
import { postgresBench } from "./PostgresBench.ts"
import { worstInputBench } from "./WorstInputBench.ts"

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, node ${process.versions.node}`
const only = process.argv.slice(2)
const wanted = (name: string): boolean => only.length === 0 || only.includes(name)

const print = (lines: ReadonlyArray<string>): void => {
  for (const line of lines) process.stdout.write(`${line}\n`)
  process.stdout.write("\n")
}

process.stdout.write(`gpu-serials benchmarks on ${machine}\n\n`)
if (wanted("parse")) print(parseBench())
if (wanted("worst")) print(worstInputBench())
if (wanted("inventory")) print(inventoryBench())
if (wanted("otlp")) print(await otlpBench())
if (wanted("nats")) print(await natsBench())
if (wanted("http")) print(await httpBench())
if (wanted("postgres")) print(await postgresBench())
if (wanted("pipeline")) for (const scenario of pipelineScenarios) print(await pipelineBench(scenario))
