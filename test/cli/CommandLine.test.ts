import { describe, expect, it } from "vitest"
import { type CommandLineSpec, parseCommandLine } from "../../src/cli/CommandLine.ts"

const spec: CommandLineSpec = { options: { format: "value", verbose: "switch", labels: "negatable" } }
const known = ["--format", "--verbose", "--labels", "--no-labels"]

describe("parseCommandLine", () => {
  it("reads a value after a space or an equals sign, anywhere on the line", () => {
    const line = parseCommandLine(["a.xml", "--format", "table", "b.xml", "--format=json"], spec)
    expect(line.options.get("format")).toBe("json")
    expect(line.positionals).toEqual(["a.xml", "b.xml"])
    expect(line.problems).toEqual([])
  })

  it("keeps every repeated option in order, and the last value by name", () => {
    const line = parseCommandLine(["--format", "a", "--format=b"], spec)
    expect(line.given).toEqual([
      { name: "format", option: "--format", value: "a" },
      { name: "format", option: "--format", value: "b" },
    ])
    expect(line.options).toEqual(new Map([["format", "b"]]))
  })

  it("takes an empty value after an equals sign and a value that starts with one dash", () => {
    expect(parseCommandLine(["--format="], spec).options.get("format")).toBe("")
    expect(parseCommandLine(["--format", "-1"], spec).options.get("format")).toBe("-1")
  })

  it("reports a value option without a value, leaving a following option to be read", () => {
    const line = parseCommandLine(["--format", "--verbose"], spec)
    expect(line.problems).toEqual([{ kind: "needs-value", option: "--format" }])
    expect(line.options.get("verbose")).toBe("true")
    expect(parseCommandLine(["--format"], spec).problems).toEqual([{ kind: "needs-value", option: "--format" }])
  })

  it("reads a switch without a value and never takes the next argument", () => {
    const line = parseCommandLine(["--verbose", "false"], spec)
    expect(line.options.get("verbose")).toBe("true")
    expect(line.positionals).toEqual(["false"])
    expect(parseCommandLine(["--verbose=true"], spec).problems).toEqual([
      { kind: "takes-no-value", option: "--verbose" },
    ])
    expect(parseCommandLine(["--no-verbose"], spec).problems).toEqual([
      { kind: "unknown", option: "--no-verbose", known },
    ])
  })

  it("reads a negatable switch as --x, --no-x and --x=text, naming the form typed", () => {
    expect(parseCommandLine(["--labels", "--no-labels", "--labels=maybe"], spec).given).toEqual([
      { name: "labels", option: "--labels", value: "true" },
      { name: "labels", option: "--no-labels", value: "false" },
      { name: "labels", option: "--labels", value: "maybe" },
    ])
    expect(parseCommandLine(["--no-labels=true"], spec).problems).toEqual([
      { kind: "takes-no-value", option: "--no-labels" },
    ])
  })

  it("reports unknown options as typed, with every known option for hints", () => {
    expect(parseCommandLine(["--colour=red", "-v", "-x=1", "--toString"], spec).problems).toEqual([
      { kind: "unknown", option: "--colour", known },
      { kind: "unknown", option: "-v", known },
      { kind: "unknown", option: "-x=1", known },
      { kind: "unknown", option: "--toString", known },
    ])
  })

  it("keeps a lone dash as a positional and ends the options at --", () => {
    const line = parseCommandLine(["-", "--", "--format", "-v"], spec)
    expect(line.positionals).toEqual(["-", "--format", "-v"])
    expect(line.problems).toEqual([])
  })

  it("reports every other argument, -- included, where none are expected", () => {
    const line = parseCommandLine(["stray", "--", "--format", "json", "-"], { ...spec, others: "unexpected" })
    expect(line.problems).toEqual([
      { kind: "unexpected-argument", argument: "stray" },
      { kind: "unexpected-argument", argument: "--" },
      { kind: "unexpected-argument", argument: "-" },
    ])
    expect(line.options.get("format")).toBe("json")
    expect(line.positionals).toEqual([])
  })

  it("passes every argument that is not its own option on, untouched and in order", () => {
    const line = parseCommandLine(["--workers", "4", "--format", "json", "-w", "--", "--labels=x", "--format"], {
      options: { format: "value" },
      others: "passed-on",
    })
    expect(line.positionals).toEqual(["--workers", "4", "-w", "--", "--labels=x"])
    expect(line.options.get("format")).toBe("json")
    expect(line.problems).toEqual([{ kind: "needs-value", option: "--format" }])
  })
})
