/** A command's own options: each takes a value (`--format table`, `--format=table`) or is a switch. */
export type OptionSpec = Readonly<Record<string, "value" | "switch">>

export interface ParsedCommandLine {
  readonly options: ReadonlyMap<string, string>
  readonly positionals: ReadonlyArray<string>
  /** Every problem of the line, so a command can report them together with its own checks. */
  readonly problems: ReadonlyArray<UsageProblem>
}

/** A wrong command line: the message names the option or argument at fault. */
export interface UsageProblem {
  readonly message: string
}

/** Parses options anywhere on the line; `--` ends options; a lone `-` is a positional (stdin). */
export const parseCommandLine = (argv: ReadonlyArray<string>, spec: OptionSpec): ParsedCommandLine => {
  const options = new Map<string, string>()
  const positionals: Array<string> = []
  const problems: Array<UsageProblem> = []
  for (let position = 0; position < argv.length; position++) {
    const argument = argv[position] ?? ""
    if (argument === "--") {
      positionals.push(...argv.slice(position + 1))
      break
    }
    if (!argument.startsWith("--")) {
      if (argument.startsWith("-") && argument !== "-") problems.push({ message: `unknown option ${argument}` })
      else positionals.push(argument)
      continue
    }
    const equals = argument.indexOf("=")
    const name = argument.slice(2, equals === -1 ? undefined : equals)
    const kind = spec[name]
    if (kind === undefined) {
      problems.push({ message: `unknown option --${name}` })
      continue
    }
    if (kind === "switch") {
      if (equals !== -1) problems.push({ message: `option --${name} takes no value` })
      else options.set(name, "true")
      continue
    }
    const value = equals === -1 ? argv[++position] : argument.slice(equals + 1)
    if (value === undefined || (equals === -1 && value.startsWith("--"))) {
      problems.push({ message: `option --${name} needs a value` })
      if (value !== undefined) position--
      continue
    }
    options.set(name, value)
  }
  return { options, positionals, problems }
}
