import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { NodeReading } from "../../domain/NodeReading.ts"
import type { KubeApi } from "../../kubeclient/rest/KubeApi.ts"
import type { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import {
  decideCommandOutcome,
  formatForDriverBranch,
  type NvsmiMode,
  queryArgvFor,
  queryFormatFor,
} from "../../nvsmi/Command.ts"
import { parseCsvReading } from "../../nvsmi/CsvReadingParser.ts"
import { execArgvFor, type NvidiaSmiBinary, plainNvidiaSmi } from "../../nvsmi/ExecArgv.ts"
import { type NvsmiError, OutputTooLarge } from "../../nvsmi/NvsmiError.ts"
import type { OutputFormat } from "../../nvsmi/OutputFormat.ts"
import {
  droppedHealthGroups,
  healthQueryFields,
  queryFieldsFor,
  refusedFieldsForDriverBranch,
} from "../../nvsmi/QueryFields.ts"
import { XmlReadingParser } from "../../nvsmi/XmlReadingParser.ts"
import type { DevicePluginPod } from "./DevicePluginPod.ts"
import { runInPod } from "./PodExec.ts"
import { failureOfNvsmi, type ReadFailure, readFailure } from "./ReadFailure.ts"

export interface NvidiaSmiReaderOptions {
  readonly mode: NvsmiMode
  readonly maxOutputBytes: number
  /** The device-plugin container nvidia-smi runs in. */
  readonly container: string
  /** Where nvidia-smi is in that container and the library it preloads; `nvidia-smi` on `PATH` when absent. */
  readonly binary?: NvidiaSmiBinary
}

/** How a node is read, and what `auto` mode settled on for each node. */
export interface NvidiaSmiReader {
  /** Runs nvidia-smi in the pod and parses what it printed, within `deadlineMillis` (a Clock time). */
  readonly read: (
    pod: DevicePluginPod,
    deadlineMillis: number,
    driverBranch?: number,
  ) => Effect.Effect<NodeReading, ReadFailure, KubeApi | ServiceMetrics>
  /**
   * Forgets what a node's driver settled on, the format and the health fields it refused: its pod was
   * replaced (a driver upgrade restarts it) or the node left.
   */
  readonly forget: (nodeName: string) => void
}

/** Enough of stdout to recognise a document or a failure message, as `decideCommandOutcome` expects. */
const headBytes = 64 * 1024

/** One decoder for every output: a whole buffer at a time, so it keeps no state between outputs. */
const utf8 = new TextDecoder("utf-8")

/** Keeps the first `limit` bytes of a stream of chunks. */
class OutputHead {
  private readonly chunks: Array<Buffer> = []
  private kept = 0
  private readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  push(chunk: Buffer): void {
    if (this.kept < this.limit) {
      const part = chunk.subarray(0, this.limit - this.kept)
      this.chunks.push(part)
      this.kept += part.length
    }
  }

  private decoded: string | undefined

  /** Decoded once, on first use: a successful XML run never needs it. */
  text(): string {
    this.decoded ??= utf8.decode(Buffer.concat(this.chunks, this.kept))
    return this.decoded
  }
}

interface Run {
  readonly exitCode: number
  readonly stdoutHead: () => string
  readonly stderr: string
  /** Parses the whole output: ends the streaming XML parser, or reads the collected CSV. */
  readonly parse: () => Result.Result<NodeReading, NvsmiError>
}

/** One run for the format, one per health field a driver may refuse, one after an XML fall-back. */
const maxRunsPerReading = healthQueryFields.size + 2

/**
 * Reads nodes with the nvidia-smi strategy of `nvsmi/Command`: `xml` streams `-q -x` into the strict
 * parser as it arrives, `csv` collects the `--query-gpu` output, `auto` starts with CSV and, on a driver
 * that lacks an identity field, runs XML at once and remembers that for the node; a node labelled with a
 * driver branch older than the platform fields starts with XML. A health field the driver refuses is left
 * out with its group, at once and for the node's later readings, so a reading is one exec once settled; a
 * node labelled with a branch known to refuse one is asked without it from the first run.
 */
export const make = (options: NvidiaSmiReaderOptions): NvidiaSmiReader => {
  /** Nodes read as XML after the CSV query failed them: the others read as their labels say, kept nowhere. */
  const formats = new Map<string, OutputFormat>()
  const refusedFields = new Map<string, ReadonlySet<string>>()
  const binary = options.binary ?? plainNvidiaSmi
  const xmlArgv = execArgvFor(binary, queryArgvFor("xml"))
  /** The CSV query's fields and argv for each set of refused fields, made once: most nodes share one set. */
  const csvQueries = new WeakMap<
    ReadonlySet<string>,
    { readonly fields: ReadonlyArray<string>; readonly argv: ReadonlyArray<string> }
  >()
  const csvQueryFor = (refused: ReadonlySet<string>) => {
    let query = csvQueries.get(refused)
    if (query === undefined) {
      query = { fields: queryFieldsFor(refused), argv: execArgvFor(binary, queryArgvFor("csv", refused)) }
      csvQueries.set(refused, query)
    }
    return query
  }

  const run = (
    pod: DevicePluginPod,
    format: OutputFormat,
    refused: ReadonlySet<string>,
    deadlineMillis: number,
  ): Effect.Effect<Run, ReadFailure, KubeApi | ServiceMetrics> =>
    Effect.clockWith((clock) => {
      const xml = format === "xml" ? new XmlReadingParser({ maxBytes: options.maxOutputBytes }) : undefined
      const csv = format === "xml" ? undefined : csvQueryFor(refused)
      const head = new OutputHead(format === "xml" ? headBytes : options.maxOutputBytes)
      return runInPod({
        namespace: pod.namespace,
        pod: pod.name,
        container: options.container,
        argv: csv === undefined ? xmlArgv : csv.argv,
        maxOutputBytes: options.maxOutputBytes,
        onStdout: (chunk) => {
          xml?.write(chunk)
          head.push(chunk)
        },
        timeout: Duration.millis(Math.max(0, deadlineMillis - clock.currentTimeMillisUnsafe())),
      }).pipe(
        // For nvidia-smi, more output than the cap is the parser's `output-too-large`, whatever the format.
        Effect.catchTag("OutputCapExceeded", (capped) =>
          Effect.fail(
            failureOfNvsmi(new OutputTooLarge({ maxBytes: capped.maxBytes, receivedBytes: capped.receivedBytes })),
          ),
        ),
        Effect.map(
          (result): Run => ({
            exitCode: result.exitCode,
            stdoutHead: () => head.text(),
            stderr: result.stderrHint,
            parse: () =>
              xml === undefined
                ? parseCsvReading(head.text(), { fields: csvQueryFor(refused).fields, wholeOutput: true })
                : xml.end(),
          }),
        ),
      )
    })

  // Untraced: a named Effect.fn captures a stack trace and opens a span on every reading.
  const read = Effect.fnUntraced(function* (pod: DevicePluginPod, deadlineMillis: number, driverBranch?: number) {
    const node = pod.nodeName
    let remembered = formats.get(node) ?? formatForDriverBranch(driverBranch)
    let refused = refusedFields.get(node) ?? refusedFieldsForDriverBranch(driverBranch)
    for (let attempt = 0; attempt < maxRunsPerReading; attempt++) {
      const format = queryFormatFor(options.mode, remembered)
      const finished = yield* run(pod, format, refused, deadlineMillis)
      const outcome = decideCommandOutcome({
        mode: options.mode,
        remembered,
        refused,
        exitCode: finished.exitCode,
        get stdoutHead() {
          return finished.stdoutHead()
        },
        stderr: finished.stderr,
      })
      switch (outcome._tag) {
        case "Parse": {
          const parsed = finished.parse()
          return Result.isSuccess(parsed) ? parsed.success : yield* failureOfNvsmi(parsed.failure)
        }
        case "FallBackToXml": {
          formats.set(node, outcome.remember)
          remembered = outcome.remember
          yield* Effect.logDebug("nvidia-smi query field unknown to the driver, reading the node as XML").pipe(
            Effect.annotateLogs({ node, field: outcome.field }),
          )
          break
        }
        case "LeaveOutHealthField": {
          refused = outcome.refused
          refusedFields.set(node, refused)
          yield* Effect.logDebug("nvidia-smi health field unknown to the driver, leaving its group out").pipe(
            Effect.annotateLogs({ node, field: outcome.field, leftOut: droppedHealthGroups(refused).join(",") }),
          )
          break
        }
        case "Fail":
          return yield* failureOfNvsmi(outcome.error)
      }
    }
    return yield* readFailure("command-failed", "nvidia-smi rejected every query it was given")
  })

  return {
    read,
    forget: (nodeName) => {
      formats.delete(nodeName)
      refusedFields.delete(nodeName)
    },
  }
}
