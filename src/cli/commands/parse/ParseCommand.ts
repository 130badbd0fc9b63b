import { hostname } from "node:os"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { formatByteSize } from "../../../config/ByteSize.ts"
import { settingFromText } from "../../../config/Setting.ts"
import { settingReference } from "../../../config/SettingsReference.ts"
import { readingRecords } from "../../../domain/GpuRecordBuilder.ts"
import type { GpuFailure } from "../../../domain/NodeReading.ts"
import { recordJson } from "../../../exporter/RecordJson.ts"
import { defectMessage } from "../../../log/ShortMessage.ts"
import type { NvsmiError } from "../../../nvsmi/NvsmiError.ts"
import { parseNvsmiOutput } from "../../../nvsmi/NvsmiOutput.ts"
import { defaultMaxOutputBytes } from "../../../nvsmi/XmlReadingParser.ts"
import { nvidiaSmiMaxOutputSetting } from "../../../receiver/kube/KubeExecConfig.ts"
import { CliIo } from "../../CliIo.ts"
import { parseCommandLine } from "../../CommandLine.ts"
import { ExitCode } from "../../ExitCode.ts"
import { terminalText } from "../../TerminalText.ts"
import { optionProblem, usageFailure } from "../../UsageFailure.ts"
import { recordTable } from "./RecordTable.ts"

const maxBytesReference = settingReference(nvidiaSmiMaxOutputSetting)

export const parseUsage = `Usage: gpu-serials parse [FILE|-] [--format json|table] [--cluster NAME] [--node NAME]
                         [--max-bytes SIZE]

Reads one nvidia-smi capture (-q -x XML or --query-gpu CSV, detected) from FILE or standard input
and prints one gpu-serials/v1 record per GPU. Exits 1 when the capture is a failure output (the typed
error is printed on stderr) or when some GPUs could not be read (their records are still printed).

  --format json|table   one JSON record per line (default) or an aligned table
  --cluster NAME        cluster written into the records (default: $CLUSTER_NAME, else "local")
  --node NAME           node written into the records (default: this host's name)
  --max-bytes SIZE      refuse captures larger than SIZE, written as NVIDIA_SMI_MAX_OUTPUT is: bytes
                        or 512Ki, 8Mi (default ${formatByteSize(defaultMaxOutputBytes)}, range ${maxBytesReference.range})
`

const formats = ["json", "table"] as const

/** `gpu-serials parse`: what an operator runs on a node to see what the service would read there. */
export const parseCommand = Effect.fn("ParseCommand")(function* (argv: ReadonlyArray<string>) {
  const io = yield* CliIo
  const commandLine = parseCommandLine(argv, {
    options: { format: "value", cluster: "value", node: "value", "max-bytes": "value" },
  })
  const { options, positionals } = commandLine
  const format = options.get("format") ?? "json"
  const maxBytesText = options.get("max-bytes")
  // The same parser and range as the service's output cap.
  const maxBytesRead =
    maxBytesText === undefined
      ? Result.succeed(defaultMaxOutputBytes)
      : settingFromText(nvidiaSmiMaxOutputSetting, maxBytesText, "--max-bytes")
  const maxBytes = Result.getOrElse(maxBytesRead, () => defaultMaxOutputBytes)
  const problems = [
    ...commandLine.problems.map(optionProblem),
    ...(formats.some((known) => known === format)
      ? []
      : [{ message: `--format must be json or table, not ${format}` }]),
    ...(Result.isFailure(maxBytesRead) ? [{ message: maxBytesRead.failure }] : []),
    ...(positionals.length > 1 ? [{ message: "parse reads one capture: give one FILE or -" }] : []),
  ]
  if (problems.length > 0) return yield* usageFailure("parse", problems, parseUsage)

  const path = positionals[0] ?? "-"
  const input = yield* Effect.tryPromise({
    try: () => readCapped(io.input(path), maxBytes),
    catch: defectMessage,
  }).pipe(Effect.result)
  if (Result.isFailure(input)) {
    const source = path === "-" ? "standard input" : path
    yield* io.stderr(`${terminalText(`gpu-serials parse: cannot read ${source}: ${input.failure}`)}\n`)
    return ExitCode.failure
  }

  const reading = parseNvsmiOutput(input.success, { maxBytes })
  if (Result.isFailure(reading)) {
    yield* io.stderr(describeError(reading.failure))
    return ExitCode.failure
  }
  const records = readingRecords(
    reading.success,
    {
      cluster: options.get("cluster") ?? io.env.CLUSTER_NAME ?? "local",
      node: options.get("node") ?? hostname(),
      source: path === "-" ? "stdin" : path,
      time: new Date(),
    },
    "observed",
  )
  yield* io.stdout(
    format === "table" ? recordTable(records) : records.map((record) => `${recordJson(record)}\n`).join(""),
  )
  for (const failure of reading.success.failures) yield* io.stderr(describeFailure(failure))
  return reading.success.failures.length === 0 ? ExitCode.ok : ExitCode.failure
})

/** Reads at most `maxBytes + 1` bytes, enough for the parser to tell that the capture is too large. */
const readCapped = async (chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Uint8Array> => {
  const kept: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of chunks) {
    kept.push(chunk)
    size += chunk.byteLength
    if (size > maxBytes) break
  }
  return Buffer.concat(kept)
}

const describeError = (error: NvsmiError): string => {
  const excerpt =
    "excerpt" in error && error.excerpt !== ""
      ? `\n  output begins: ${terminalText(JSON.stringify(error.excerpt))}`
      : ""
  return `gpu-serials parse: ${error.kind}: ${terminalText(error.message)}${excerpt}\n`
}

const describeFailure = (failure: GpuFailure): string => {
  const gpu = failure.index === undefined ? "a GPU" : `GPU ${failure.index}`
  const bus = failure.pciBusId === undefined ? "" : ` (${failure.pciBusId})`
  return `${terminalText(`gpu-serials parse: ${failure.kind}: ${gpu}${bus} could not be read: ${failure.reason}`)}\n`
}
