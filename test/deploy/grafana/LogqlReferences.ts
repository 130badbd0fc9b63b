/**
 * What a LogQL query reads from a log stream, for checking it against what the otlp exporter sends.
 * A strict reader of the LogQL the dashboards use: stream selectors, line filters, label filters,
 * `line_format`, `label_format`, `regexp`, `unwrap`, `keep`/`drop`, range and vector aggregations with
 * their grouping; anything else (a `json` or `logfmt` stage, an unknown word) fails, so a query can
 * never pass unread.
 */

export interface Matcher {
  readonly name: string
  readonly op: string
  readonly value: string
}

export interface LineFilter {
  readonly op: "|=" | "!=" | "|~" | "!~"
  readonly text: string
}

export interface LogqlReferences {
  /** Matchers of the stream selectors `{…}`: index labels only. */
  readonly streamMatchers: ReadonlyArray<Matcher>
  /** Label filters of the pipelines (`| name op value`): index labels, structured metadata or created names. */
  readonly labelFilters: ReadonlyArray<Matcher>
  /** Every name read after a selector: label filters, template fields, grouping, `unwrap`, `keep`/`drop`. */
  readonly namesRead: ReadonlySet<string>
  /** Names the query creates itself: `regexp` named groups and `label_format` targets. */
  readonly namesCreated: ReadonlySet<string>
  readonly lineFilters: ReadonlyArray<LineFilter>
  /** Patterns of `regexp` stages, in RE2 syntax. */
  readonly regexps: ReadonlyArray<string>
}

type TokenKind = "string" | "word" | "number" | "op"
interface Token {
  readonly kind: TokenKind
  readonly text: string
}

const operators = [
  "|=",
  "|~",
  "!=",
  "!~",
  "=~",
  "==",
  ">=",
  "<=",
  "=",
  ">",
  "<",
  "|",
  "{",
  "}",
  "(",
  ")",
  "[",
  "]",
  ",",
  "*",
  "/",
  "+",
  "-",
  "%",
  "^",
]

const rangeAggregations = new Set([
  "count_over_time",
  "rate",
  "rate_counter",
  "bytes_over_time",
  "bytes_rate",
  "absent_over_time",
  "sum_over_time",
  "avg_over_time",
  "max_over_time",
  "min_over_time",
  "first_over_time",
  "last_over_time",
  "stdvar_over_time",
  "stddev_over_time",
  "quantile_over_time",
])
const vectorAggregations = new Set([
  "sum",
  "avg",
  "min",
  "max",
  "count",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "sort",
  "sort_desc",
])
const binaryKeywords = new Set(["and", "or", "unless", "bool"])
const labelComparators = new Set(["=", "!=", "=~", "!~", "==", ">", ">=", "<", "<="])
const lineFilterOps = new Set(["|=", "!=", "|~", "!~"])

const unquote = (quoted: string): string =>
  quoted.startsWith("`") ? quoted.slice(1, -1) : quoted.slice(1, -1).replace(/\\(.)/g, "$1")

const tokensOf = (query: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let at = 0
  while (at < query.length) {
    const rest = query.slice(at)
    const space = /^\s+/.exec(rest)
    if (space !== null) {
      at += space[0].length
      continue
    }
    const quoted = /^("(?:[^"\\]|\\.)*"|`[^`]*`)/.exec(rest)
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)
    const number = /^[0-9][0-9A-Za-z.]*/.exec(rest)
    const op = operators.find((candidate) => rest.startsWith(candidate))
    if (quoted !== null) tokens.push({ kind: "string", text: unquote(quoted[0]) })
    else if (word !== null) tokens.push({ kind: "word", text: word[0] })
    else if (number !== null) tokens.push({ kind: "number", text: number[0] })
    else if (op !== undefined) tokens.push({ kind: "op", text: op })
    else throw new Error(`unexpected ${JSON.stringify(rest.charAt(0))} at ${at} in ${query}`)
    at += (quoted ?? word ?? number)?.[0].length ?? op?.length ?? 1
  }
  return tokens
}

/** Field references (`.name`) in the actions (`{{ … }}`) of a Go template. */
const templateFields = (template: string): ReadonlyArray<string> =>
  [...template.matchAll(/\{\{(.*?)\}\}/gs)].flatMap((action) =>
    [...(action[1] ?? "").matchAll(/(?:^|[^\w.])\.([A-Za-z_]\w*)/g)].map((field) => field[1] ?? ""),
  )

export const logqlReferencesOf = (query: string): LogqlReferences => {
  const tokens = tokensOf(query)
  const streamMatchers: Array<Matcher> = []
  const labelFilters: Array<Matcher> = []
  const namesRead = new Set<string>()
  const namesCreated = new Set<string>()
  const lineFilters: Array<LineFilter> = []
  const regexps: Array<string> = []
  let at = 0

  const peek = (offset = 0): Token | undefined => tokens[at + offset]
  const fail = (what: string): never => {
    throw new Error(`${what} at token ${at} (${JSON.stringify(peek()?.text ?? "end")}) in ${query}`)
  }
  const take = (kind: TokenKind, text?: string): string => {
    const token = peek()
    if (token === undefined || token.kind !== kind || (text !== undefined && token.text !== text)) {
      return fail(`expected ${text ?? kind}`)
    }
    at += 1
    return token.text
  }
  const nameList = () => {
    take("op", "(")
    while (peek()?.text !== ")") {
      namesRead.add(take("word"))
      if (peek()?.text === ",") at += 1
    }
    take("op", ")")
  }

  const selector = () => {
    take("op", "{")
    while (peek()?.text !== "}") {
      const name = take("word")
      const op = take("op")
      if (!["=", "!=", "=~", "!~"].includes(op)) fail(`matcher operator ${op}`)
      streamMatchers.push({ name, op, value: take("string") })
      if (peek()?.text === ",") at += 1
    }
    take("op", "}")
  }

  const labelFilter = () => {
    const name = take("word")
    const op = take("op")
    if (!labelComparators.has(op)) fail(`label filter operator ${op}`)
    const value = peek()?.kind === "number" ? take("number") : take("string")
    labelFilters.push({ name, op, value })
    namesRead.add(name)
  }

  const stage = () => {
    const word = peek()?.kind === "word" ? (peek()?.text ?? "") : fail("expected a pipeline stage")
    if (word === "line_format") {
      at += 1
      for (const field of templateFields(take("string"))) namesRead.add(field)
    } else if (word === "label_format") {
      at += 1
      for (;;) {
        const target = take("word")
        take("op", "=")
        if (peek()?.kind === "string") for (const field of templateFields(take("string"))) namesRead.add(field)
        else namesRead.add(take("word"))
        namesCreated.add(target)
        if (peek()?.text !== ",") break
        at += 1
      }
    } else if (word === "regexp") {
      at += 1
      const pattern = take("string")
      regexps.push(pattern)
      for (const group of pattern.matchAll(/\(\?P<([A-Za-z_]\w*)>/g)) namesCreated.add(group[1] ?? "")
    } else if (word === "unwrap") {
      at += 1
      namesRead.add(take("word"))
    } else if (word === "keep" || word === "drop") {
      at += 1
      for (;;) {
        namesRead.add(take("word"))
        if (peek()?.text !== ",") break
        at += 1
      }
    } else if (word === "json" || word === "logfmt" || word === "pattern" || word === "unpack") {
      fail(`the ${word} stage creates names that cannot be checked`)
    } else {
      labelFilter()
      while (peek()?.text === "and" || peek()?.text === "or" || peek()?.text === ",") {
        at += 1
        labelFilter()
      }
    }
  }

  const pipeline = () => {
    for (;;) {
      const token = peek()
      if (token?.kind === "op" && lineFilterOps.has(token.text)) {
        at += 1
        lineFilters.push({ op: token.text as LineFilter["op"], text: take("string") })
      } else if (token?.kind === "op" && token.text === "|") {
        at += 1
        stage()
      } else return
    }
  }

  while (at < tokens.length) {
    const token = peek() as Token
    if (token.kind === "op" && token.text === "{") {
      selector()
      pipeline()
    } else if (token.kind === "word") {
      const word = token.text
      at += 1
      if (word === "by" || word === "without" || word === "on" || word === "ignoring") nameList()
      else if (word === "group_left" || word === "group_right") {
        if (peek()?.text === "(") nameList()
      } else if (rangeAggregations.has(word) || vectorAggregations.has(word)) {
        if (peek()?.text !== "(" && peek()?.text !== "by" && peek()?.text !== "without") fail(`${word} without (`)
      } else if (!binaryKeywords.has(word)) {
        at -= 1
        fail(`unknown word ${word}`)
      }
    } else if (token.kind === "string") fail("a string outside a selector or stage")
    else at += 1
  }
  return { streamMatchers, labelFilters, namesRead, namesCreated, lineFilters, regexps }
}
