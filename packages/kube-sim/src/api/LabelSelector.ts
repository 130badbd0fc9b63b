import { badRequest } from "./ApiStatus.ts"

/**
 * The `labelSelector` of list and watch requests, parsed as the API server's `labels.Parse` does:
 * `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<5`, joined by commas.
 * The simulator keeps its own parser so that it judges a client's selector independently of that client.
 */

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | ">" | "<"

export interface LabelRequirement {
  readonly key: string
  readonly operator: LabelOperator
  readonly values: ReadonlyArray<string>
}

/** A label selector of a list or watch request, ready to match objects' labels. */
export interface LabelSelector {
  readonly requirements: ReadonlyArray<LabelRequirement>
  matches(labels: Readonly<Record<string, string>> | undefined): boolean
}

export const everything: LabelSelector = { requirements: [], matches: () => true }

type TokenKind = "identifier" | "end" | "(" | ")" | "," | "!" | "=" | "==" | "!=" | ">" | "<" | "in" | "notin"

interface Token {
  readonly kind: TokenKind
  readonly text: string
}

const symbols: ReadonlyArray<TokenKind> = ["!=", "==", "=", "!", "(", ")", ",", ">", "<"]
const symbolStarts = new Set("=!(),<>")
const whitespace = new Set(" \t\r\n")
const endToken: Token = { kind: "end", text: "end of string" }

const tokenize = (selector: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let at = 0
  while (at < selector.length) {
    const char = selector.charAt(at)
    if (whitespace.has(char)) {
      at++
    } else if (symbolStarts.has(char)) {
      const symbol = symbols.find((candidate) => selector.startsWith(candidate, at)) ?? "!"
      tokens.push({ kind: symbol, text: symbol })
      at += symbol.length
    } else {
      let end = at
      while (
        end < selector.length &&
        !symbolStarts.has(selector.charAt(end)) &&
        !whitespace.has(selector.charAt(end))
      ) {
        end++
      }
      const word = selector.slice(at, end)
      tokens.push({ kind: word === "in" || word === "notin" ? word : "identifier", text: word })
      at = end
    }
  }
  tokens.push(endToken)
  return tokens
}

class SelectorSyntaxError extends Error {}

const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** A qualified name: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
const checkKey = (key: string): void => {
  const slash = key.indexOf("/")
  const name = slash === -1 ? key : key.slice(slash + 1)
  if (slash !== -1) {
    const prefix = key.slice(0, slash)
    if (prefix.length === 0 || prefix.length > 253 || !prefix.split(".").every((part) => dnsLabel.test(part))) {
      throw new SelectorSyntaxError(`key "${key}": prefix must be a lowercase DNS subdomain`)
    }
  }
  if (name.length > 63 || !labelName.test(name)) {
    throw new SelectorSyntaxError(
      `key "${key}": name part must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`,
    )
  }
}

const checkValue = (value: string): void => {
  if (value !== "" && (value.length > 63 || !labelName.test(value))) {
    throw new SelectorSyntaxError(
      `value "${value}": must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`,
    )
  }
}

class SelectorParser {
  private readonly tokens: ReadonlyArray<Token>
  private position = 0

  constructor(tokens: ReadonlyArray<Token>) {
    this.tokens = tokens
  }

  /** Where a key or a value may stand, `in` and `notin` are plain words, as in the API server's parser. */
  private peek(asWord: boolean): Token {
    const token = this.tokens[this.position] ?? endToken
    return asWord && (token.kind === "in" || token.kind === "notin") ? { kind: "identifier", text: token.text } : token
  }

  private take(asWord: boolean): Token {
    const token = this.peek(asWord)
    this.position++
    return token
  }

  parse(): ReadonlyArray<LabelRequirement> {
    const requirements: Array<LabelRequirement> = []
    const first = this.peek(true)
    if (first.kind === "end") return requirements
    if (first.kind !== "identifier" && first.kind !== "!") {
      throw new SelectorSyntaxError(`found '${first.text}', expected: !, identifier, or 'end of string'`)
    }
    for (;;) {
      requirements.push(this.requirement())
      const after = this.take(true)
      if (after.kind === "end") return requirements
      if (after.kind !== ",") throw new SelectorSyntaxError(`found '${after.text}', expected: ',' or 'end of string'`)
      const next = this.peek(true)
      if (next.kind !== "identifier" && next.kind !== "!") {
        throw new SelectorSyntaxError(`found '${next.text}', expected: identifier after ','`)
      }
    }
  }

  private requirement(): LabelRequirement {
    let token = this.take(true)
    const absent = token.kind === "!"
    if (absent) token = this.take(true)
    if (token.kind !== "identifier") throw new SelectorSyntaxError(`found '${token.text}', expected: identifier`)
    const key = token.text
    checkKey(key)
    if (absent) return { key, operator: "!", values: [] }
    const following = this.peek(false)
    if (following.kind === "end" || following.kind === ",") return { key, operator: "exists", values: [] }
    const operator = this.take(false)
    switch (operator.kind) {
      case "=":
      case "==":
      case "!=":
        return { key, operator: operator.kind === "!=" ? "!=" : "=", values: [this.exactValue()] }
      case ">":
      case "<":
        return { key, operator: operator.kind, values: [this.integerValue()] }
      case "in":
      case "notin":
        return { key, operator: operator.kind, values: this.valueSet() }
      default:
        throw new SelectorSyntaxError(`found '${operator.text}', expected: '=', '!=', '==', 'in', 'notin', '>' or '<'`)
    }
  }

  /** `a=` selects the empty value. */
  private exactValue(): string {
    const value = this.peek(true)
    if (value.kind === "end" || value.kind === ",") return ""
    this.take(true)
    if (value.kind !== "identifier") throw new SelectorSyntaxError(`found '${value.text}', expected: identifier`)
    checkValue(value.text)
    return value.text
  }

  private integerValue(): string {
    const value = this.take(true)
    if (value.kind !== "identifier") throw new SelectorSyntaxError(`found '${value.text}', expected: identifier`)
    if (!/^[+-]?\d+$/.test(value.text)) {
      throw new SelectorSyntaxError(`for '>', '<' operators, the value must be an integer, not "${value.text}"`)
    }
    return value.text
  }

  /** `(x,y)`; empty items (`()`, `(,x)`, `(x,,y)`) stand for the empty value, as the API server reads them. */
  private valueSet(): ReadonlyArray<string> {
    const open = this.take(false)
    if (open.kind !== "(") throw new SelectorSyntaxError(`found '${open.text}', expected: '('`)
    const values = new Set<string>()
    let expectingItem = true
    for (;;) {
      const token = this.take(true)
      if (token.kind === ")") {
        if (expectingItem) values.add("")
        return [...values]
      }
      if (token.kind === ",") {
        if (expectingItem) values.add("")
        expectingItem = true
      } else if (token.kind === "identifier" && expectingItem) {
        checkValue(token.text)
        values.add(token.text)
        expectingItem = false
      } else {
        throw new SelectorSyntaxError(`found '${token.text}', expected: ',', ')' or identifier`)
      }
    }
  }
}

const integer = (text: string | undefined): bigint | undefined =>
  text !== undefined && /^[+-]?\d+$/.test(text) ? BigInt(text) : undefined

const requirementMatches = (requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean => {
  const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined
  switch (requirement.operator) {
    case "=":
    case "in":
      return value !== undefined && requirement.values.includes(value)
    case "!=":
    case "notin":
      return value === undefined || !requirement.values.includes(value)
    case "exists":
      return value !== undefined
    case "!":
      return value === undefined
    case ">":
    case "<": {
      const actual = integer(value)
      const bound = integer(requirement.values[0])
      if (actual === undefined || bound === undefined) return false
      return requirement.operator === ">" ? actual > bound : actual < bound
    }
  }
}

/** Parses the `labelSelector` query parameter; a bad one is a 400, as from the API server. */
export const parseLabelSelector = (text: string | null | undefined): LabelSelector => {
  const source = (text ?? "").trim()
  if (source === "") return everything
  let requirements: ReadonlyArray<LabelRequirement>
  try {
    requirements = new SelectorParser(tokenize(source)).parse()
  } catch (error) {
    if (!(error instanceof SelectorSyntaxError)) throw error
    throw badRequest(`unable to parse requirement: ${error.message} (in selector "${source}")`)
  }
  return {
    requirements,
    matches: (labels) => requirements.every((requirement) => requirementMatches(requirement, labels ?? {})),
  }
}
