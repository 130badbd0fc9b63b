import { cpus } from "node:os"
import { apiBench } from "./ApiBench.ts"
import { cliBench } from "./CliBench.ts"
import { firstListBench } from "./FirstListBench.ts"
import { fleetPageBench } from "./FleetPageBench.ts"
import { httpBench } from "./HttpBench.ts"
import { hubBench } from "./HubBench.ts"
import { inventoryBench } from "./InventoryBench.ts"
import { natsBench } from "./NatsBench.ts"
import { otlpBench } from "./OtlpBench.ts"
import { parseBench } from "./ParseBench.ts"
import { fleetScaleScenario, pipelineBench, pipelineScenariosAt } from "./PipelineBench.ts"
import { postgresBench } from "./PostgresBench.ts"
import { scrapeBench } from "./ScrapeBench.ts"
import { soakBench, soakScenario } from "./SoakBench.ts"
import { tlsHandshakeBench } from "./TlsHandshakeBench.ts"
import { worstInputBench } from "./WorstInputBench.ts"

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, node ${process.versions.node}`
const args = process.argv.slice(2)
/** The whole number after `flag`, `fallback` without the flag. */
const wholeNumberFlag = (flag: string, fallback: number): number => {
  const at = args.indexOf(flag)
  const value = at < 0 ? fallback : Number(args[at + 1])
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a whole number, at least 1`)
  return value
}
const runs = wholeNumberFlag("--runs", 1)
/** The pipeline scenarios' runs: 3 unless `--runs` says otherwise. */
const pipelineRuns = args.includes("--runs") ? runs : 3
/** The pipeline scenarios' fleet size (`--nodes 10000` for the larger fleet). */
const pipelineNodes = wholeNumberFlag("--nodes", 2_000)
/** How long `soak` runs, in minutes. */
const soakMinutes = wholeNumberFlag("--minutes", 30)
/** The flags followed by a value; the others stand alone. */
const flagsWithValue = new Set(["--runs", "--minutes", "--heap-snapshots", "--samples", "--nodes"])
const only = args.filter((arg, at) => !arg.startsWith("--") && !flagsWithValue.has(args[at - 1] ?? ""))
/** The folder `soak` writes its two heap snapshots to, none without the flag. */
const heapSnapshotFolder = args.includes("--heap-snapshots") ? args[args.indexOf("--heap-snapshots") + 1] : undefined
/** The file `soak` appends each sample to as a line of JSON, none without the flag. */
const samplesFile = args.includes("--samples") ? args[args.indexOf("--samples") + 1] : undefined
const wanted = (name: string): boolean => only.length === 0 || only.includes(name)
/** Parts too long for a plain `npm run bench`: run only when named. */
const named = (name: string): boolean => only.includes(name)

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
if (wanted("cli")) print(cliBench(Math.max(runs, 3)))
if (wanted("scrape")) print(await scrapeBench())
if (wanted("tls")) print(await tlsHandshakeBench(Math.max(runs, 3)))
if (wanted("api")) print(await apiBench())
if (wanted("api")) print(await fleetPageBench())
if (wanted("lists")) print(await firstListBench(pipelineNodes, runs))
if (wanted("pipeline"))
  for (const scenario of pipelineScenariosAt(pipelineNodes)) print(await pipelineBench(scenario, pipelineRuns))
if (named("pipeline50k")) print(await pipelineBench(fleetScaleScenario, runs))
if (named("hub")) print(await hubBench(runs))
if (named("soak"))
  print(
    await soakBench(
      soakScenario(soakMinutes, {
        fleetPage: !args.includes("--no-fleet-page"),
        ...(heapSnapshotFolder === undefined ? {} : { heapSnapshotFolder }),
        ...(samplesFile === undefined ? {} : { samplesFile }),
      }),
    ),
  )
