import { listHeadLimitBytes } from "./ListHead.ts"

/** The bytes that open a list's items after the keys before them. */
const itemsOpening = Buffer.from(',"items":[', "utf8")
const quote = 0x22
const backslash = 0x5c
const openBrace = 0x7b
const closeBrace = 0x7d
const closeBracket = 0x5d
const colon = 0x3a

const isWhitespace = (byte: number | undefined): boolean =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09

/** A list body read item by item: the keys before its items, and what `keep` made of each item. */
export interface ListBody<A> {
  readonly head: Readonly<Record<string, unknown>>
  readonly items: Array<A>
}

/**
 * A list answer's body parsed item by item, each item handed to `keep` as soon as it is parsed: the same
 * as `JSON.parse` of the whole body with `keep` mapped over its items, for a body of the shape the API
 * server writes (the keys before `"items"`, then the items as the last key, compact), or `undefined` for
 * any other body, which the caller parses whole (`keep`, a pure function, then sees every item again).
 *
 * A whole page parsed at once makes one string of megabytes (V8 allocates it outside the young generation)
 * and keeps every object of every item alive until the last item is parsed and decoded, so the garbage
 * collector copies and promotes all of them; parsed one by one and decoded at once, each item's text and
 * objects die young and only what `keep` answers stays. The items are found without a scanner: every item
 * of a list starts with the same key (the API server writes an object's fields in its Go struct's order),
 * so consecutive items meet at `},{"<key>":`. That sequence never occurs inside a JSON string (a string's
 * quotes are escaped there), and where it occurs inside an item the piece cut there is not a JSON value:
 * so each piece is exactly one item when every piece parses, and the body is parsed whole when one does not.
 */
export const listOfBody = <A>(body: Buffer, keep: (item: unknown) => A): ListBody<A> | undefined => {
  const head = headOf(body)
  if (head === undefined) return undefined
  let end = body.length - 1
  while (end > head.itemsFrom && isWhitespace(body[end])) end -= 1
  if (body[end] !== closeBrace) return undefined
  end -= 1
  if (body[end] !== closeBracket) return undefined
  const items = itemsBetween(body, head.itemsFrom, end, keep)
  return items === undefined ? undefined : { head: head.keys, items }
}

/** The keys before the items, parsed, and where the items' first byte is; the first `,"items":[` whose keys parse. */
const headOf = (body: Buffer): { readonly keys: Record<string, unknown>; readonly itemsFrom: number } | undefined => {
  const limit = Math.min(body.length, listHeadLimitBytes)
  let at = body.indexOf(itemsOpening)
  while (at !== -1 && at < limit) {
    const keys = objectOf(`${body.toString("utf8", 0, at)}}`)
    if (keys !== undefined)
      return Object.hasOwn(keys, "items") ? undefined : { keys, itemsFrom: at + itemsOpening.length }
    at = body.indexOf(itemsOpening, at + 1)
  }
  return undefined
}

const objectOf = (text: string): Record<string, unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * What `keep` makes of the items in `body[from, to)` (inside the brackets), each parsed on its own;
 * `undefined` when a piece is no JSON value.
 */
const itemsBetween = <A>(body: Buffer, from: number, to: number, keep: (item: unknown) => A): Array<A> | undefined => {
  if (from === to) return []
  const keyEnd = body.indexOf(quote, from + 2)
  if (body[from] !== openBrace || body[from + 1] !== quote || keyEnd === -1 || keyEnd >= to) return undefined
  if (body[keyEnd + 1] !== colon) return undefined
  if (body.subarray(from + 2, keyEnd).includes(backslash)) return undefined
  // `},{"<first key>":`, the meeting of two items.
  const between = Buffer.concat([Buffer.from("},", "utf8"), body.subarray(from, keyEnd + 2)])
  const items: Array<A> = []
  let start = from
  for (;;) {
    const meeting = body.indexOf(between, start)
    const stop = meeting === -1 || meeting >= to ? to : meeting + 1
    let item: unknown
    try {
      item = JSON.parse(body.toString("utf8", start, stop))
    } catch {
      return undefined
    }
    items.push(keep(item))
    if (stop === to) return items
    start = stop + 1
  }
}
