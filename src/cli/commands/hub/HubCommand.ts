import { jetstreamManager } from "@nats-io/jetstream"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { openExistingBucket } from "../../../exporter/nats/GpuLocationBucket.ts"
import { natsCommandConfig, natsSettingFlags } from "../../../exporter/nats/NatsCommandConfig.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
import { redactUrlsIn } from "../../../log/UrlRedaction.ts"
import { NatsConnectError } from "../../../natsclient/NatsConnectError.ts"
import { scoped as scopedConnection, serverList } from "../../../natsclient/NatsConnection.ts"
import { hubStreamSetting } from "../../../receiver/nats/HubNatsConfig.ts"
import { CliIo } from "../../CliIo.ts"
import { type CommandLineSpec, parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { terminalText } from "../../TerminalText.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"
import { type FleetClusterStatus, FleetStatusError, fleetClusterStatus } from "./FleetClusterStatus.ts"
import { hubUsage } from "./HubUsage.ts"

const formats = ["table", "json"] as const

const spec: CommandLineSpec = {
  options: {
    "hub-stream": "value",
    format: "value",
    ...Object.fromEntries([...natsSettingFlags.keys()].map((name) => [name, "value" as const])),
  },
}

/** `12s ago`, `3m ago`, `2h ago`, `4d ago`: how long ago, to the unit that matters. */
const ago = (ms: number): string => {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 120) return `${seconds}s ago`
  if (seconds < 7_200) return `${Math.round(seconds / 60)}m ago`
  if (seconds < 172_800) return `${Math.round(seconds / 3_600)}h ago`
  return `${Math.round(seconds / 86_400)}d ago`
}

const columns: ReadonlyArray<readonly [string, (status: FleetClusterStatus, now: number) => string]> = [
  ["CLUSTER", (status) => status.cluster],
  [
    "LAST HEARD",
    (status, now) =>
      status.lastHeard === undefined ? "never" : `${status.lastHeard} (${ago(now - Date.parse(status.lastHeard))})`,
  ],
  ["LAG", (status) => (status.sourceLag === undefined ? "-" : String(status.sourceLag))],
  ["SOURCE SEEN", (status) => (status.sourceActiveMsAgo === undefined ? "never" : ago(status.sourceActiveMsAgo))],
  ["GPUS", (status) => String(status.gpus)],
]

/** The clusters as an aligned text table, control characters escaped. */
const statusTable = (clusters: ReadonlyArray<FleetClusterStatus>, now: number): string => {
  const rows = [
    columns.map(([title]) => title),
    ...clusters.map((status) => columns.map(([, cell]) => terminalText(cell(status, now)))),
  ]
  const widths = columns.map((_, at) => Math.max(...rows.map((row) => (row[at] ?? "").length)))
  return rows
    .map((row) => row.map((cell, at) => (at === row.length - 1 ? cell : cell.padEnd(widths[at] ?? 0))).join("  "))
    .join("\n")
    .concat("\n")
}

/** `gpu-serials hub status`: the clusters of a hub, from its stream and its KV bucket. */
export const hubCommand = Effect.fn("HubCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const commandLine = parseCommandLine(argv, spec)
  const format = commandLine.options.get("format") ?? "table"
  const stream = commandLine.options.get("hub-stream") ?? io.env.HUB_STREAM ?? hubStreamSetting.default ?? ""
  const streamProblem = hubStreamSetting.check?.(stream)
  const [subcommand, ...extra] = commandLine.positionals
  const problems = [
    ...commandLine.problems.map(optionProblem),
    ...(subcommand === undefined ? [{ message: "hub needs a subcommand: status" }] : []),
    ...(subcommand === undefined || subcommand === "status" ? [] : [{ message: `unknown subcommand ${subcommand}` }]),
    ...(formats.some((known) => known === format)
      ? []
      : [{ message: `--format must be table or json, not ${format}` }]),
    ...(streamProblem === undefined
      ? []
      : [{ message: `${commandLine.options.has("hub-stream") ? "--hub-stream" : "HUB_STREAM"}: ${streamProblem}` }]),
    ...extra.map((argument) => ({ message: `unexpected argument ${argument}` })),
  ]
  const config = natsCommandConfig(commandLine.options, io.env)
  if (Result.isFailure(config)) {
    problems.push(...config.failure.map((problem) => ({ message: `${problem.key}: ${problem.message}` })))
  }
  if (problems.length > 0 || Result.isFailure(config)) return yield* usageFailure("hub", problems, hubUsage)

  const bucket = config.success.kvBucket
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* scopedConnection(config.success, "gpu-serials hub status")
      const manager = yield* Effect.tryPromise({
        try: () => jetstreamManager(connection, { timeout: 10_000 }),
        catch: (cause) => new FleetStatusError({ message: `JetStream: ${defectMessage(cause)}` }),
      })
      const kv = yield* openExistingBucket(connection, bucket)
      const clusters = yield* fleetClusterStatus(manager, kv, {
        stream,
        bucket,
        subjectPrefix: config.success.subjectPrefix,
      })
      yield* io.stdout(
        format === "json"
          ? clusters.map((status) => `${JSON.stringify(status)}\n`).join("")
          : statusTable(clusters, Date.now()),
      )
      return ExitCode.ok
    }),
  ).pipe(
    Effect.catch((error) =>
      io
        .stderr(
          `gpu-serials hub status: ${terminalText(
            error instanceof NatsConnectError
              ? error.message
              : `hub at ${serverList(config.success)}: ${redactUrlsIn(error.message)}`,
          )}\n`,
        )
        .pipe(Effect.as(ExitCode.failure)),
    ),
  )
})
