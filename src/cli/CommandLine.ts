/**
 * How an option is given: `value` takes one (`--format table`, `--format=table`, never a next argument
 * that starts with `--`); `switch` takes none; `negatable` is a switch that also has a `--no-` form and
 * takes its value after `=` (`--labels`, `--no-labels`, `--labels=false`).
 */
export type OptionKind = "value" | "switch" | "negatable"

export interface CommandLineSpec {
  /** The options by name, without the leading dashes. */
  readonly options: Readonly<Record<string, OptionKind>>
  /**
   * What becomes of the other arguments: `positionals` (the default) collects them and `--` ends the
   * options; `unexpected` reports each one, `--` included, as a problem; `passed-on` leaves them, unknown
   * options included, untouched and in order in `positionals` for another parser.
   */
  readonly others?: "positionals" | "unexpected" | "passed-on"
}

/** One option as given on the line. */
export interface GivenOption {
  /** The option's name in the spec. */
  readonly name: string
  /** The option as typed, without its value: `--no-labels`. */
  readonly option: string
  /** The value given; `true` for a switch, `false` for a `--no-` form. */
  readonly value: string
}

/** What is wrong with one argument; `option` and `argument` are as typed, so callers word it their way. */
export type CommandLineProblem =
  | {
      readonly kind: "unknown"
      readonly option: string
      /** Every option the spec knows, as typed (`--no-` forms included), for did-you-mean hints. */
      readonly known: ReadonlyArray<string>
    }
  | { readonly kind: "needs-value" | "takes-no-value"; readonly option: string }
  | { readonly kind: "unexpected-argument"; readonly argument: string }

export interface ParsedCommandLine {
  /** Every option in the order given; a repeated option appears each time, for callers that collect. */
  readonly given: ReadonlyArray<GivenOption>
  /** The last value given of each option, by name. */
  readonly options: ReadonlyMap<string, string>
  /** The arguments that are not options; with `passed-on`, every argument that is not the spec's option. */
  readonly positionals: ReadonlyArray<string>
  /** Every problem of the line, so a caller can report them together with its own checks. */
  readonly problems: ReadonlyArray<CommandLineProblem>
}

const knownOptions = (spec: CommandLineSpec): ReadonlyArray<string> =>
  Object.entries(spec.options).flatMap(([name, kind]) =>
    kind === "negatable" ? [`--${name}`, `--no-${name}`] : [`--${name}`],
  )

/** The spec's option a typed name (without dashes) stands for, and whether it is the `--no-` form. */
const lookup = (
  spec: CommandLineSpec,
  typed: string,
): { name: string; kind: OptionKind; negated: boolean } | undefined => {
  const kind = Object.hasOwn(spec.options, typed) ? spec.options[typed] : undefined
  if (kind !== undefined) return { name: typed, kind, negated: false }
  const positive = typed.startsWith("no-") ? typed.slice(3) : undefined
  return positive !== undefined && Object.hasOwn(spec.options, positive) && spec.options[positive] === "negatable"
    ? { name: positive, kind: "negatable", negated: true }
    : undefined
}

/** Parses long options anywhere on the line; a lone `-` is a positional (stdin), `-x` an unknown option. */
export const parseCommandLine = (argv: ReadonlyArray<string>, spec: CommandLineSpec): ParsedCommandLine => {
  const others = spec.others ?? "positionals"
  const given: Array<GivenOption> = []
  const positionals: Array<string> = []
  const problems: Array<CommandLineProblem> = []
  const other = (argument: string) => {
    if (others === "unexpected") problems.push({ kind: "unexpected-argument", argument })
    else positionals.push(argument)
  }
  for (let position = 0; position < argv.length; position++) {
    const argument = argv[position] ?? ""
    if (argument === "--" && others === "positionals") {
      positionals.push(...argv.slice(position + 1))
      break
    }
    if (argument === "--" || argument === "-" || !argument.startsWith("-")) {
      other(argument)
      continue
    }
    const equals = argument.indexOf("=")
    // Only long options are known: a single-dash argument is unknown as a whole, `=` and all.
    const typed = argument.startsWith("--") ? argument.slice(0, equals === -1 ? undefined : equals) : argument
    const option = typed.startsWith("--") ? lookup(spec, typed.slice(2)) : undefined
    if (option === undefined) {
      if (others === "passed-on") positionals.push(argument)
      else problems.push({ kind: "unknown", option: typed, known: knownOptions(spec) })
      continue
    }
    const { name, kind, negated } = option
    if (kind !== "value") {
      if (equals === -1) given.push({ name, option: typed, value: negated ? "false" : "true" })
      else if (kind === "switch" || negated) problems.push({ kind: "takes-no-value", option: typed })
      else given.push({ name, option: typed, value: argument.slice(equals + 1) })
      continue
    }
    const value = equals === -1 ? argv[position + 1] : argument.slice(equals + 1)
    if (value === undefined || (equals === -1 && value.startsWith("--"))) {
      problems.push({ kind: "needs-value", option: typed })
      continue
    }
    if (equals === -1) position++
    given.push({ name, option: typed, value })
  }
  const options = new Map(given.map((option) => [option.name, option.value]))
  return { given, options, positionals, problems }
}
