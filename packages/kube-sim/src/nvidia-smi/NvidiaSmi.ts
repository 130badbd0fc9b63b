import type { HostGpu, SimulatedHost } from "../catalog/SimulatedHost.ts"
import { type OutputLayout, ProcessOutput, plainLayout } from "../cluster/ProcessOutput.ts"
import { deviceHandleExitCode, deviceHandleLine, fatalFailure, lostGpuIndex } from "./DriverFailureOutput.ts"
import { gpuListing } from "./GpuListing.ts"
import { queryGpu } from "./QueryGpu.ts"
import { summaryTable } from "./SummaryTable.ts"
import { textReport } from "./TextReport.ts"
import { xmlReport } from "./XmlReport.ts"

/** What a finished process gave back. */
export interface ProgramOutcome {
  readonly stdout: ProcessOutput
  readonly stderr: ProcessOutput
  readonly exitCode: number
}

type Mode = "table" | "xml" | "text" | "list" | "query" | "help" | "version"

interface Invocation {
  readonly mode: Mode
  readonly queryFields: ReadonlyArray<string>
  readonly format: { readonly header: boolean; readonly units: boolean } | undefined
  readonly ids: ReadonlyArray<string>
}

/**
 * nvidia-smi as the device-plugin container runs it: honours its argv (`-q -x`, `-q`, `--query-gpu` with
 * `--format=csv[,noheader][,nounits]`, `-L`, `-i`, `--version`, no arguments for the table), reports the
 * host's GPUs for its driver release, and fails the way the real tool does on a broken driver.
 */
export const runNvidiaSmi = (
  host: SimulatedHost,
  argv: ReadonlyArray<string>,
  now: Date,
  layout: OutputLayout = plainLayout,
): ProgramOutcome => {
  const stdout = new ProcessOutput(layout)
  const stderr = new ProcessOutput(layout)
  const outcome = (text: string, exitCode: number): ProgramOutcome => {
    stdout.write(text)
    return { stdout, stderr, exitCode }
  }
  const invalidArguments = () =>
    outcome("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n", 2)
  const invocation = parseArguments(argv)
  if (invocation === undefined) return invalidArguments()
  if (invocation.mode === "help") return outcome(usage(host), 0)
  if (invocation.mode === "version") return outcome(versionText(host), 0)
  const failure = host.failure
  if (failure !== undefined) {
    const fatal = fatalFailure(host, failure)
    if (fatal !== undefined) return outcome(fatal.stdout, fatal.exitCode)
  }
  const lost = failure === "device-handle" ? host.gpus[lostGpuIndex(host)] : undefined
  const answering = host.gpus.filter((gpu) => gpu !== lost)
  const selected = selectGpus(answering, invocation.ids)
  if (selected === undefined) return outcome("No devices were found\n", 6)
  const prefix = lost === undefined ? "" : deviceHandleLine(lost)
  const exitCode = lost === undefined ? 0 : deviceHandleExitCode
  switch (invocation.mode) {
    case "xml":
      stdout.write(prefix)
      xmlReport(host, now, stdout, selected)
      return { stdout, stderr, exitCode }
    case "text":
      return outcome(prefix + textReport(host, now, selected), exitCode)
    case "list":
      return outcome(prefix + gpuListing(host, selected), exitCode)
    case "table":
      return outcome(prefix + summaryTable(host, selected, now), exitCode)
    case "query": {
      if (invocation.format === undefined) return invalidArguments()
      const query = queryGpu(host, selected, invocation.queryFields, invocation.format, now)
      if ("invalidField" in query) return outcome(`Field "${query.invalidField}" is not a valid field to query.\n\n`, 2)
      return outcome(prefix + query.csv, exitCode)
    }
  }
}

const parseArguments = (argv: ReadonlyArray<string>): Invocation | undefined => {
  let query = false
  let xml = false
  let list = false
  let help = false
  let version = false
  let queryFields: string[] | undefined
  let format: Invocation["format"]
  const ids: string[] = []
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? ""
    const [flag = "", inline] = argument.startsWith("--") ? splitOnce(argument) : [argument, undefined]
    const value = () => {
      if (inline !== undefined) return inline
      index++
      return argv[index]
    }
    switch (flag) {
      case "-q":
      case "--query":
        query = true
        break
      case "-x":
      case "--xml-format":
        xml = true
        break
      case "-L":
      case "--list-gpus":
        list = true
        break
      case "-h":
      case "--help":
        help = true
        break
      case "--version":
        version = true
        break
      case "-i":
      case "--id": {
        const id = value()
        if (id === undefined || id === "") return undefined
        ids.push(...id.split(","))
        break
      }
      case "--query-gpu": {
        const fields = value()
        if (fields === undefined || fields === "") return undefined
        queryFields = fields.split(",").map((field) => field.trim())
        break
      }
      case "--format": {
        const options = (value() ?? "").split(",").map((option) => option.trim())
        if (!options.includes("csv") || options.some((option) => !["csv", "noheader", "nounits"].includes(option)))
          return undefined
        format = { header: !options.includes("noheader"), units: !options.includes("nounits") }
        break
      }
      default:
        return undefined
    }
  }
  if (help) return { mode: "help", queryFields: [], format, ids }
  if (version) return { mode: "version", queryFields: [], format, ids }
  if (queryFields !== undefined) {
    if (query || xml || list) return undefined
    return { mode: "query", queryFields, format, ids }
  }
  if (format !== undefined) return undefined
  if (list) return query || xml ? undefined : { mode: "list", queryFields: [], format, ids }
  if (xml) return query ? { mode: "xml", queryFields: [], format, ids } : undefined
  if (query) return { mode: "text", queryFields: [], format, ids }
  return { mode: "table", queryFields: [], format, ids }
}

const splitOnce = (argument: string): [string, string | undefined] => {
  const at = argument.indexOf("=")
  return at < 0 ? [argument, undefined] : [argument.slice(0, at), argument.slice(at + 1)]
}

/** `-i` accepts indexes, UUIDs and PCI bus ids; an id that matches nothing is "No devices were found". */
const selectGpus = (gpus: ReadonlyArray<HostGpu>, ids: ReadonlyArray<string>): ReadonlyArray<HostGpu> | undefined => {
  if (ids.length === 0) return gpus
  const selected = gpus.filter((gpu) =>
    ids.some(
      (id) =>
        id === String(gpu.slot.index) ||
        id.toLowerCase() === gpu.identity.uuid.toLowerCase() ||
        id.toUpperCase() === gpu.slot.pciBusId ||
        `0000${id.toUpperCase()}` === gpu.slot.pciBusId,
    ),
  )
  return selected.length === 0 ? undefined : selected
}

const versionText = (host: SimulatedHost): string => {
  const [major, minor] = host.driver.version.split(".")
  return [
    `NVIDIA-SMI version  : ${host.driver.version}`,
    `NVML version        : ${major}.${minor}`,
    `DRIVER version      : ${host.driver.version}`,
    `CUDA Version        : ${host.driver.cudaVersion}`,
    "",
  ].join("\n")
}

const usage = (host: SimulatedHost): string =>
  [
    `NVIDIA System Management Interface -- v${host.driver.version}`,
    "",
    "nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...",
    "",
    "    -h,   --help                Print usage information and exit.",
    "          --version             Print version information and exit.",
    "    -L,   --list-gpus           Display a list of GPUs connected to the system.",
    "    -q,   --query               Display GPU or Unit info.",
    "    -x,   --xml-format          Produce XML output.",
    "    -i,   --id=                 Target a specific GPU.",
    "    --query-gpu=                Information about GPU.",
    "    --format=                   Comma separated list of format options: csv, noheader, nounits.",
    "",
  ].join("\n")
