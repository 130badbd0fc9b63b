import * as Result from "effect/Result"
import { validateDnsSubdomain } from "../../config/DnsSubdomain.ts"

/**
 * Kubernetes label selectors, with the grammar of apimachinery's `labels.Parse`: equality (`a=b`, `a==b`,
 * `a!=b`), set-based (`a in (x,y)`, `a notin (x)`), existence (`a`, `!a`) and the integer comparisons
 * (`a>1`, `a<5`), joined by commas.
 */

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | ">" | "<"

export interface LabelRequirement {
  readonly key: string
  readonly operator: LabelOperator
  readonly values: ReadonlyArray<string>
}

type TokenKind = "identifier" | "end" | "(" | ")" | "," | "!" | "=" | "==" | "!=" | ">" | "<" | "in" | "notin"

interface Token {
  readonly kind: TokenKind
  readonly text: string
}

const SPECIAL = new Set(["=", "!", "(", ")", ",", ">", "<"])
const WHITESPACE = new Set([" ", "\t", "\r", "\n"])
const SYMBOLS: ReadonlyArray<TokenKind> = ["!=", "==", "=", "!", "(", ")", ",", ">", "<"]

const lex = (selector: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < selector.length) {
    const c = selector[i] ?? ""
    if (WHITESPACE.has(c)) {
      i++
      continue
    }
    if (SPECIAL.has(c)) {
      const symbol = SYMBOLS.find((s) => selector.startsWith(s, i)) ?? "!"
      tokens.push({ kind: symbol, text: symbol })
      i += symbol.length
      continue
    }
    let end = i
    while (end < selector.length && !SPECIAL.has(selector[end] ?? "") && !WHITESPACE.has(selector[end] ?? "")) end++
    const word = selector.slice(i, end)
    tokens.push({ kind: word === "in" ? "in" : word === "notin" ? "notin" : "identifier", text: word })
    i = end
  }
  tokens.push({ kind: "end", text: "end of string" })
  return tokens
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/

const validateKey = (key: string): string | undefined => {
  const slash = key.indexOf("/")
  const name = slash === -1 ? key : key.slice(slash + 1)
  if (slash !== -1) {
    const prefix = key.slice(0, slash)
    const problem = validateDnsSubdomain(prefix)
    if (problem !== undefined) return `key ${JSON.stringify(key)}: prefix ${problem}`
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `key ${JSON.stringify(key)}: name must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`
  }
  return undefined
}

const validateValue = (value: string): string | undefined =>
  value === "" || (value.length <= 63 && NAME.test(value))
    ? undefined
    : `value ${JSON.stringify(value)}: must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`

class SelectorParser {
  private readonly tokens: ReadonlyArray<Token>
  private position = 0

  constructor(tokens: ReadonlyArray<Token>) {
    this.tokens = tokens
  }

  /** In a value position the keywords `in` and `notin` are plain words. */
  private peek(asValue = false): Token {
    const token = this.tokens[this.position] ?? { kind: "end", text: "end of string" }
    return asValue && (token.kind === "in" || token.kind === "notin") ? { kind: "identifier", text: token.text } : token
  }

  private next(asValue = false): Token {
    const token = this.peek(asValue)
    this.position++
    return token
  }

  parse(): Result.Result<ReadonlyArray<LabelRequirement>, string> {
    const requirements: Array<LabelRequirement> = []
    const first = this.peek()
    if (first.kind === "end") return Result.succeed(requirements)
    if (first.kind !== "identifier" && first.kind !== "!") {
      return Result.fail(`found '${first.text}', expected: !, identifier, or 'end of string'`)
    }
    for (;;) {
      const requirement = this.requirement()
      if (Result.isFailure(requirement)) return Result.fail(requirement.failure)
      requirements.push(requirement.success)
      const after = this.next()
      if (after.kind === "end") return Result.succeed(requirements)
      if (after.kind !== ",") return Result.fail(`found '${after.text}', expected: ',' or 'end of string'`)
      const following = this.peek()
      if (following.kind !== "identifier" && following.kind !== "!") {
        return Result.fail(`found '${following.text}', expected: identifier after ','`)
      }
    }
  }

  private requirement(): Result.Result<LabelRequirement, string> {
    let negated = false
    if (this.peek().kind === "!") {
      this.next()
      negated = true
    }
    const key = this.next()
    if (key.kind !== "identifier") return Result.fail(`found '${key.text}', expected: identifier`)
    const keyProblem = validateKey(key.text)
    if (keyProblem !== undefined) return Result.fail(keyProblem)
    if (negated) return Result.succeed({ key: key.text, operator: "!", values: [] })
    const operator = this.peek()
    if (operator.kind === "end" || operator.kind === ",") {
      return Result.succeed({ key: key.text, operator: "exists", values: [] })
    }
    this.next()
    switch (operator.kind) {
      case "=":
      case "==":
      case "!=":
        return this.exactValue(key.text, operator.kind === "!=" ? "!=" : "=")
      case ">":
      case "<":
        return this.integerValue(key.text, operator.kind)
      case "in":
      case "notin":
        return this.valueSet(key.text, operator.kind)
      default:
        return Result.fail(`found '${operator.text}', expected: '=', '!=', '==', 'in', 'notin', '>' or '<'`)
    }
  }

  private exactValue(key: string, operator: "=" | "!="): Result.Result<LabelRequirement, string> {
    const value = this.peek(true)
    if (value.kind === "end" || value.kind === ",") return Result.succeed({ key, operator, values: [""] })
    this.next(true)
    if (value.kind !== "identifier") return Result.fail(`found '${value.text}', expected: identifier`)
    const problem = validateValue(value.text)
    return problem === undefined ? Result.succeed({ key, operator, values: [value.text] }) : Result.fail(problem)
  }

  private integerValue(key: string, operator: ">" | "<"): Result.Result<LabelRequirement, string> {
    const value = this.next(true)
    if (value.kind !== "identifier") return Result.fail(`found '${value.text}', expected: identifier`)
    if (!/^[+-]?\d+$/.test(value.text)) return Result.fail(`for '>' and '<' the value must be an integer`)
    return Result.succeed({ key, operator, values: [value.text] })
  }

  private valueSet(key: string, operator: "in" | "notin"): Result.Result<LabelRequirement, string> {
    const open = this.next()
    if (open.kind !== "(") return Result.fail(`found '${open.text}', expected: '('`)
    const values: Array<string> = []
    let pending: string | undefined
    let itemSeen = false
    for (;;) {
      const token = this.next(true)
      if (token.kind === ")") {
        if (itemSeen) values.push(pending ?? "")
        break
      }
      if (token.kind === ",") {
        values.push(pending ?? "")
        pending = undefined
        itemSeen = true
        continue
      }
      if (token.kind !== "identifier" || pending !== undefined) {
        return Result.fail(`found '${token.text}', expected: ',', ')' or identifier`)
      }
      const problem = validateValue(token.text)
      if (problem !== undefined) return Result.fail(problem)
      pending = token.text
      itemSeen = true
    }
    if (values.length === 0) return Result.fail(`for 'in' and 'notin' the set of values can't be empty`)
    return Result.succeed({ key, operator, values: [...new Set(values)] })
  }
}

/** Parses a label selector; the error text says what was found where. */
export const parseLabelSelector = (selector: string): Result.Result<ReadonlyArray<LabelRequirement>, string> =>
  new SelectorParser(lex(selector)).parse()
