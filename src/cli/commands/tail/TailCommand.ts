import type { Msg, Subscription } from "@nats-io/transport-node"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { inventoryEventKinds } from "../../../domain/InventoryEventKind.ts"
import { natsCommandConfig, natsSettingFlags } from "../../../exporter/nats/NatsCommandConfig.ts"
import { filterSubject } from "../../../exporter/nats/NatsSubject.ts"
import { redactUrlsIn } from "../../../log/UrlRedaction.ts"
import { NatsConnectError } from "../../../natsclient/NatsConnectError.ts"
import { connectTimeout, scoped as scopedConnection, serverList } from "../../../natsclient/NatsConnection.ts"
import { CliIo } from "../../CliIo.ts"
import { clusterSelection } from "../../ClusterOption.ts"
import { type CommandLineSpec, parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"
import { tailUsage } from "./TailUsage.ts"

const spec: CommandLineSpec = {
  options: {
    cluster: "value",
    node: "value",
    event: "value",
    count: "value",
    ...Object.fromEntries([...natsSettingFlags.keys()].map((name) => [name, "value" as const])),
  },
}

const decoder = new TextDecoder()

/** The messages of a subscription until it ends; unsubscribed when the stream stops early. */
const messages = (subscription: Subscription): Stream.Stream<Msg, Error> =>
  Stream.fromAsyncIterable(subscription, (cause) =>
    cause instanceof Error ? cause : new Error("subscription failed"),
  ).pipe(Stream.ensuring(Effect.sync(() => subscription.unsubscribe())))

/** `gpu-serials tail`: the inventory events as they are published. */
export const tailCommand = Effect.fn("TailCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const commandLine = parseCommandLine(argv, spec)
  const { options } = commandLine
  const event = options.get("event")
  const countText = options.get("count")
  const count = countText === undefined ? undefined : Number(countText)
  const { clusters, problems: clusterProblems } = clusterSelection(commandLine)
  const problems = [
    ...commandLine.problems.map(optionProblem),
    ...clusterProblems,
    ...commandLine.positionals.map((argument) => ({ message: `unexpected argument ${argument}` })),
    ...(event === undefined || inventoryEventKinds.some((kind) => kind === event)
      ? []
      : [{ message: `--event must be one of ${inventoryEventKinds.join(", ")}, not ${event}` }]),
    ...(count === undefined || (Number.isSafeInteger(count) && count > 0)
      ? []
      : [{ message: `--count must be a positive integer, not ${countText}` }]),
  ]
  const config = natsCommandConfig(options, io.env)
  if (Result.isFailure(config)) {
    problems.push(...config.failure.map((problem) => ({ message: `${problem.key}: ${problem.message}` })))
  }
  if (problems.length > 0 || Result.isFailure(config)) return yield* usageFailure("tail", problems, tailUsage)

  const node = options.get("node")
  // One subject per cluster followed: a subject names one cluster token or all of them.
  const subjects = (clusters.length === 0 ? [undefined] : clusters).map((cluster) =>
    filterSubject(config.success.subjectPrefix, {
      ...(cluster === undefined ? {} : { cluster }),
      ...(node === undefined ? {} : { node }),
      ...(event === undefined ? {} : { event }),
    }),
  )
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* scopedConnection(config.success, "gpu-serials tail")
      const subscriptions = subjects.map((subject) => connection.subscribe(subject))
      yield* Effect.tryPromise(() => connection.flush()).pipe(Effect.timeout(connectTimeout))
      yield* io.stderr(`gpu-serials tail: listening on ${subjects.join(", ")}\n`)
      const records = Stream.mergeAll(subscriptions.map(messages), { concurrency: "unbounded" })
      yield* (count === undefined ? records : Stream.take(records, count)).pipe(
        Stream.runForEach((message) => io.stdout(`${decoder.decode(message.data)}\n`)),
      )
      return ExitCode.ok
    }),
  ).pipe(
    Effect.catch((error) =>
      io
        .stderr(
          `gpu-serials tail: ${
            error instanceof NatsConnectError
              ? error.message
              : `NATS at ${serverList(config.success)} did not answer: ${
                  error instanceof Error && error.message !== "" ? redactUrlsIn(error.message) : "no reason given"
                }`
          }\n`,
        )
        .pipe(Effect.as(ExitCode.failure)),
    ),
  )
})
