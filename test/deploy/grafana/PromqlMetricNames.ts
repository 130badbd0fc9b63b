/**
 * The metric names a PromQL expression selects. Not a parser (promtool checks the syntax): a scan that
 * skips strings, label matchers `{…}`, ranges `[…]`, label lists after `by`/`without`/`on`/`ignoring`/
 * `group_left`/`group_right`, keywords, aggregation operators and function calls; every other word is
 * a metric name.
 */

const aggregationOperators = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  "limitk",
  "limit_ratio",
])
const labelListKeywords = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"])
const otherKeywords = new Set(["and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"])

type Token = { readonly kind: "word" | "other"; readonly text: string }

const tokensOf = (expr: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let at = 0
  while (at < expr.length) {
    const rest = expr.slice(at)
    const space = /^\s+/.exec(rest)
    const quoted = /^("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/.exec(rest)
    const word = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(rest)
    const number = /^[0-9.][0-9A-Za-z.]*/.exec(rest)
    const match = space ?? quoted ?? word ?? number
    if (match !== null) {
      if (space === null) tokens.push({ kind: word !== null && quoted === null ? "word" : "other", text: match[0] })
      at += match[0].length
    } else {
      tokens.push({ kind: "other", text: rest.charAt(0) })
      at += 1
    }
  }
  return tokens
}

/** Index after the bracket that closes the one at `open`. */
const skipBracketed = (tokens: ReadonlyArray<Token>, open: number, close: string): number => {
  let at = open + 1
  while (at < tokens.length && tokens[at]?.text !== close) at += 1
  if (at >= tokens.length) throw new Error(`unclosed ${tokens[open]?.text}`)
  return at + 1
}

export const metricNamesOf = (expr: string): ReadonlySet<string> => {
  const tokens = tokensOf(expr)
  const names = new Set<string>()
  let at = 0
  while (at < tokens.length) {
    const token = tokens[at] as Token
    const next = tokens[at + 1]?.text
    if (token.text === "{") at = skipBracketed(tokens, at, "}")
    else if (token.text === "[") at = skipBracketed(tokens, at, "]")
    else if (token.kind === "word" && labelListKeywords.has(token.text)) {
      at = next === "(" ? skipBracketed(tokens, at + 1, ")") : at + 1
    } else {
      const isMetric =
        token.kind === "word" && !otherKeywords.has(token.text) && !aggregationOperators.has(token.text) && next !== "("
      if (isMetric) names.add(token.text)
      at += 1
    }
  }
  return names
}
