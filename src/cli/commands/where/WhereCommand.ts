import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { GpuLocation } from "../../../domain/GpuLocation.ts"
import { openExistingBucket } from "../../../exporter/nats/GpuLocationBucket.ts"
import { locate } from "../../../exporter/nats/GpuLocationLookup.ts"
import { natsCommandConfig, natsSettingFlags } from "../../../exporter/nats/NatsCommandConfig.ts"
import { redactUrlsIn } from "../../../log/UrlRedaction.ts"
import { scoped as scopedConnection } from "../../../natsclient/NatsConnection.ts"
import { CliIo } from "../../CliIo.ts"
import { clusterSelection } from "../../ClusterOption.ts"
import { type CommandLineSpec, parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { healthText } from "../../HealthText.ts"
import { terminalText } from "../../TerminalText.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"
import { whereUsage } from "./WhereUsage.ts"

const formats = ["table", "json"] as const

const spec: CommandLineSpec = {
  options: {
    cluster: "value",
    format: "value",
    ...Object.fromEntries([...natsSettingFlags.keys()].map((name) => [name, "value" as const])),
  },
}

const columns: ReadonlyArray<readonly [string, (location: GpuLocation) => string]> = [
  ["UUID", (location) => location.uuid],
  ["SERIAL", (location) => location.serial || "-"],
  ["CLUSTER", (location) => location.cluster],
  ["NODE", (location) => location.node],
  ["MACHINE", (location) => location.machine],
  ["CHASSIS", (location) => location.chassis || "-"],
  ["SINCE", (location) => location.since],
  ["LAST SEEN", (location) => location.lastSeen],
  // Last: its reasons make it the widest cell, and the last one is not padded.
  ["HEALTH", (location) => healthText(location.health)],
]

/** Locations as an aligned text table, one GPU a row, its last health at the end, control characters escaped. */
const locationTable = (locations: ReadonlyArray<GpuLocation>): string => {
  const rows = [
    columns.map(([title]) => title),
    ...locations.map((location) => columns.map(([, cell]) => terminalText(cell(location)))),
  ]
  const widths = columns.map((_, at) => Math.max(...rows.map((row) => (row[at] ?? "").length)))
  return rows
    .map((row) => row.map((cell, at) => (at === row.length - 1 ? cell : cell.padEnd(widths[at] ?? 0))).join("  "))
    .join("\n")
    .concat("\n")
}

/** `gpu-serials where SERIAL|UUID`: the current location of a GPU, from the KV bucket. */
export const whereCommand = Effect.fn("WhereCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const commandLine = parseCommandLine(argv, spec)
  const format = commandLine.options.get("format") ?? "table"
  const { clusters, problems: clusterProblems } = clusterSelection(commandLine)
  const [wanted, ...extra] = commandLine.positionals
  const problems = [
    ...commandLine.problems.map(optionProblem),
    ...(formats.some((known) => known === format)
      ? []
      : [{ message: `--format must be table or json, not ${format}` }]),
    ...(wanted === undefined || wanted === "" ? [{ message: "where needs a serial or a uuid" }] : []),
    ...clusterProblems,
    ...extra.map((argument) => ({ message: `unexpected argument ${argument}` })),
  ]
  const config = natsCommandConfig(commandLine.options, io.env)
  if (Result.isFailure(config)) {
    problems.push(...config.failure.map((problem) => ({ message: `${problem.key}: ${problem.message}` })))
  }
  if (problems.length > 0 || wanted === undefined || Result.isFailure(config)) {
    return yield* usageFailure("where", problems, whereUsage)
  }
  const bucket = config.success.kvBucket
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* scopedConnection(config.success, "gpu-serials where")
      const kv = yield* openExistingBucket(connection, bucket)
      const locations =
        clusters.length === 0
          ? yield* locate(kv, bucket, wanted)
          : (yield* Effect.forEach(clusters, (cluster) => locate(kv, bucket, wanted, cluster))).flat()
      if (locations.length === 0) {
        const where =
          clusters.length === 0
            ? `bucket ${bucket}`
            : `${clusters.length === 1 ? "cluster" : "clusters"} ${terminalText(clusters.join(", "))} of bucket ${bucket}`
        yield* io.stderr(`gpu-serials where: no GPU with serial or uuid ${terminalText(wanted)} in ${where}\n`)
        return ExitCode.failure
      }
      yield* io.stdout(
        format === "json"
          ? locations.map((location) => `${JSON.stringify(location)}\n`).join("")
          : locationTable(locations),
      )
      return ExitCode.ok
    }),
  ).pipe(
    Effect.catch((error) =>
      io.stderr(`gpu-serials where: ${terminalText(redactUrlsIn(error.message))}\n`).pipe(Effect.as(ExitCode.failure)),
    ),
  )
})
