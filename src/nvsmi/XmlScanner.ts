import { outputLimits } from "./OutputLimits.ts"
import { isNameChar, isNameStartChar, isReferableChar, isXmlSpace } from "./XmlCharacters.ts"

/** What the scanner tells the reading: elements as they open and close, and text while `capturing` is on. */
export interface XmlScanReader {
  /**
   * An element opened at `depth` (0 for the root), with its `id` attribute when it has one. Answers whether
   * the elements inside it matter; when not, they are checked but not reported (their text still is while
   * `capturing` is on).
   */
  readonly openElement: (name: string, depth: number, id: string | undefined) => boolean
  /** The element open at `depth` closed (only those reported open). */
  readonly closeElement: (depth: number) => void
  /** Character data while `capturing` is on: text with its entities decoded and line ends as `\n`, or CDATA. */
  readonly text: (piece: string) => void
}

const needMore = -1
const halted = -2
const disallowed = -3

const tab = 0x09
const newline = 0x0a
const carriageReturn = 0x0d
const quotationMark = 0x22
const ampersand = 0x26
const apostrophe = 0x27
const hyphen = 0x2d
const slash = 0x2f
const semicolon = 0x3b
const lessThan = 0x3c
const equalsSign = 0x3d
const greaterThan = 0x3e
const questionMark = 0x3f
const closingBracket = 0x5d
const nextLine = 0x85
const lineSeparator = 0x2028

/**
 * The ASCII characters that character data holds as they are, one lookup each: all printable ones but
 * `<`, `&`, `]` and `>` (which ends `]]>`), and tab and line feed.
 */
const plainText = new Uint8Array(0x80)
for (let code = 0x20; code < 0x7f; code++) plainText[code] = 1
for (const code of [lessThan, ampersand, closingBracket, greaterThan]) plainText[code] = 0
plainText[tab] = 1
plainText[newline] = 1

const nameSlots = 4096
const nameProbes = 4

const runTooLong = `a comment, CDATA section, processing instruction, doctype, attribute value or entity is longer than ${outputLimits.maxRunLength} characters`
const textOutsideRoot = "text data outside of root node."

const predefinedEntities: ReadonlyMap<string, string> = new Map([
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
])

/**
 * A copy of `text` that is a string of its own: a slice of 13 or more characters is a view into the text
 * it was cut from, which keeps that text alive and is slower to compare. A property key is made flat.
 */
const flatCopy = (text: string): string => Object.keys({ [text]: true })[0] ?? text

/**
 * Element names made before, by a hash of their length and ends: nvidia-smi prints a few hundred names over
 * and over, so after the first output a name costs a comparison, not an allocation. Shared by every scanner
 * of the process; a name whose slots are all taken by others is made again each time, in the first of them.
 */
const elementNames: Array<string | undefined> = new Array(nameSlots).fill(undefined)

/**
 * For each name's slot, the slot of the name of the element that opened next the last time, once after the
 * name's start tag and once after its end tag: nvidia-smi prints the same elements in the same order for
 * every GPU, so a start tag is most often read by one comparison with the name it predicts.
 */
const followers = new Int32Array(nameSlots * 2).fill(-1)

/**
 * Whether `name` is written in `text` at `from`: the cut compared whole, by the engine's own string
 * comparison, takes about half the time of a loop over the code units of both or of `startsWith` at the
 * position (each took a third of the scanner's time: 0.60–0.65× of a no-op saxes pass over the H100 capture
 * against 0.45×). The cuts are about 60 KB of a reading's 350–410 KB allocated in the pipeline bench's mix,
 * strings that die young.
 */
const isWrittenAt = (text: string, from: number, name: string): boolean => text.slice(from, from + name.length) === name

/** Whether the character at `at` ends a name the way a start tag's name ends in nvidia-smi's output. */
const endsName = (text: string, at: number): boolean => {
  const code = text.charCodeAt(at)
  return code === greaterThan || code === slash || isXmlSpace(code)
}

/** The states of a doctype, as XML's grammar nests them: its quoted ids, its internal subset and what that holds. */
const doctypeOutside = 0
const doctypeQuoted = 1
const subset = 2
const subsetQuoted = 3
const subsetMarkup = 4
const subsetBang = 5
const subsetBangHyphen = 6
const subsetComment = 7
const subsetCommentHyphen = 8
const subsetCommentEnded = 9
const subsetInstruction = 10
const subsetInstructionEnding = 11

/**
 * A strict XML scanner shaped to what nvidia-smi prints: well-formedness as saxes checks it (names,
 * matching tags, attributes, entities and character references, comments, CDATA, processing instructions,
 * the XML declaration and a doctype, the characters XML 1.0 or 1.1 allows, one root, no text outside it)
 * without building anything the reading does not ask for: an element's name is the one string it makes
 * (interned, so a repeated name costs no allocation), an attribute's value is kept for `id` only, and text
 * is cut out only while `capturing` is on. Fed text as it arrives; a piece cut by the end of a chunk is
 * scanned again with what follows, once that is at least as long, so a long piece costs a bounded number
 * of passes. Every piece is bounded by `outputLimits` (depth, elements, attributes, run length), and the
 * first problem stops it: `problem` for output that is not well-formed, `truncation` for one that ends
 * before its root element does.
 */
export class XmlScanner {
  /** Set by the reading while it keeps the text of the element open. */
  capturing = false
  /** Why the output is not well-formed XML, or crosses a limit. */
  problem: string | undefined
  /** Why the output is cut short: it ended before its root element closed. */
  truncation: string | undefined
  rootClosed = false

  private readonly reader: XmlScanReader
  private pending = ""
  /** How long `pending` was when it was last scanned: it is scanned again once it has doubled. */
  private scannedLength = 0
  private final = false
  private unfinished = false
  private heldLast = false
  private closing = false
  private stopped = false
  /** How many elements are open; the names and name slots of those are the first entries of the two below. */
  private depth = 0
  private readonly open: Array<string> = new Array(outputLimits.maxDepth).fill("")
  private readonly openSlots = new Int32Array(outputLimits.maxDepth)
  /** Where in `followers` the element that opens next is predicted: after the last start or end tag. */
  private lastTag = -1
  /** The depth of the element whose insides are not reported; deeper than any when none. */
  private quietFrom = Number.MAX_SAFE_INTEGER
  /** The slot of the name `nameOf` gave last. */
  private nameSlot = 0
  private sawRoot = false
  private doctypeSeen = false
  private xmlDeclarationPossible = true
  private xml11 = false
  private brackets = 0
  private elements = 0
  /** Code units of the code point `pointAt` read last. */
  private width = 1
  /** The value of the attribute `scanAttributeValue` kept last. */
  private attributeValue = ""

  constructor(reader: XmlScanReader) {
    this.reader = reader
  }

  /** Stops scanning: the reading refused the output for a reason of its own. */
  stop(): void {
    this.stopped = true
    this.pending = ""
  }

  write(chunk: string): void {
    if (this.stopped || chunk === "") return
    // As saxes does, a chunk's last line end or half pair waits for what follows it.
    const last = chunk.charCodeAt(chunk.length - 1)
    this.heldLast = last === carriageReturn || (last >= 0xd800 && last <= 0xdbff)
    if (!this.heldLast) {
      this.scanChunk(chunk)
      return
    }
    if (chunk.length > 1) this.scanChunk(chunk.slice(0, -1))
    if (!this.stopped) this.pending += chunk.slice(-1)
  }

  private scanChunk(text: string): void {
    const pending = this.pending
    if (pending === "") {
      this.scan(text, 0)
      return
    }
    if (pending.length + text.length < 2 * this.scannedLength) {
      this.pending = pending + text
      return
    }
    this.pending = ""
    // The piece left unfinished is finished on a short joined string, up to the first markup of the new text,
    // which is then scanned as it came: a long joined string is much slower to read.
    const head = text.indexOf("<")
    const cut = head < 0 ? text.length : head
    this.scan(pending + text.slice(0, cut), 0)
    if (this.stopped || cut === text.length) return
    const unfinished = this.pending
    if (unfinished === "") {
      this.scan(text, cut)
      return
    }
    this.pending = ""
    this.scan(unfinished + text.slice(cut), 0)
  }

  end(): void {
    if (this.stopped) return
    const rest = this.pending
    this.pending = ""
    if (this.heldLast && rest !== "") {
      // saxes reads a last line end or half pair only when the output ends, where what it finds wrong from
      // there on is a truncation unless the root element has closed: so does the scanner.
      this.scan(rest.slice(0, -1), 0)
      if (this.stopped) return
      const unfinished = this.pending + rest.slice(-1)
      this.pending = ""
      this.final = true
      this.closing = true
      this.scan(unfinished, 0)
    } else {
      this.final = true
      if (rest !== "") this.scan(rest, 0)
    }
    if (this.stopped) return
    this.stopped = true
    if (!this.unfinished && this.depth === 0 && this.sawRoot) return
    if (this.rootClosed) {
      this.problem = "unexpected end."
      return
    }
    const innermost = this.depth > 0 ? this.open[this.depth - 1] : undefined
    this.truncation =
      innermost !== undefined
        ? `unclosed tag: ${innermost}`
        : this.sawRoot
          ? "unexpected end."
          : "document must contain a root element."
  }

  private fail(detail: string): number {
    if (this.closing && !this.rootClosed) this.truncation = detail
    else this.problem = detail
    this.stop()
    return halted
  }

  private scan(text: string, from: number): void {
    const length = text.length
    let at = from
    while (at < length) {
      at = this.depth > 0 ? this.scanText(text, at) : this.scanOutsideRoot(text, at)
      if (at === halted || at >= length) return
      const code = text.charCodeAt(at)
      const next =
        code === lessThan ? this.scanMarkup(text, at) : code === ampersand ? this.scanTextEntity(text, at) : needMore
      if (next === halted) return
      if (next === needMore) {
        if (this.final) this.unfinished = true
        else {
          this.pending = text.slice(at)
          this.scannedLength = this.pending.length
        }
        return
      }
      at = next
    }
  }

  private scanOutsideRoot(text: string, from: number): number {
    for (let at = from; at < text.length; at++) {
      const code = text.charCodeAt(at)
      if (code === lessThan) return at
      if (!isXmlSpace(code)) return this.fail(textOutsideRoot)
    }
    return text.length
  }

  /** Character data inside the root, up to markup or an entity; a line end or half a pair cut by the chunk's end waits. */
  private scanText(text: string, from: number): number {
    const length = text.length
    const capturing = this.capturing
    let brackets = this.brackets
    let piece = from
    let at = from
    for (; at < length; at++) {
      const code = text.charCodeAt(at)
      if (code < 0x80 && plainText[code] === 1) {
        brackets = 0
        continue
      }
      if (code >= 0x20 && code < 0x7f) {
        if (code === lessThan || code === ampersand) break
        if (code === closingBracket) {
          if (brackets < 2) brackets++
        } else if (code === greaterThan && brackets === 2) {
          return this.fail('the string "]]>" is disallowed in char data.')
        } else {
          brackets = 0
        }
        continue
      }
      brackets = 0
      if (code === newline || code === tab) continue
      const lineEnd = this.lineEndAt(text, at)
      if (lineEnd === needMore) break
      if (lineEnd > 0) {
        if (capturing) {
          this.reader.text(`${text.slice(piece, at)}\n`)
          if (this.stopped) return halted
        }
        at += lineEnd - 1
        piece = at + 1
        continue
      }
      const width = this.characterWidth(text, at)
      if (width === needMore) break
      if (width < 0) return this.fail("disallowed character.")
      at += width - 1
    }
    this.brackets = at < length ? 0 : brackets
    if (capturing && at > piece) {
      this.reader.text(text.slice(piece, Math.min(at, length)))
      if (this.stopped) return halted
    }
    return at
  }

  /** Code units of a line end other than `\n` at `at` (`\r`, `\r\n`, and in XML 1.1 NEL and LS), 0 when none. */
  private lineEndAt(text: string, at: number): number {
    const code = text.charCodeAt(at)
    if (code === carriageReturn) {
      if (at + 1 >= text.length) return this.final ? 1 : needMore
      const next = text.charCodeAt(at + 1)
      return next === newline || (this.xml11 && next === nextLine) ? 2 : 1
    }
    return this.xml11 && (code === nextLine || code === lineSeparator) ? 1 : 0
  }

  /** Code units of the character at `at` when XML allows it, `disallowed` when not, `needMore` for half a pair at the end. */
  private characterWidth(text: string, at: number): number {
    const code = text.charCodeAt(at)
    if (code < 0x20) {
      return code === tab || code === newline || code === carriageReturn ? 1 : disallowed
    }
    if (code < 0xd800) {
      return this.xml11 && code >= 0x7f && code <= 0x9f && code !== nextLine ? disallowed : 1
    }
    if (code <= 0xdbff) {
      if (at + 1 >= text.length) return this.final ? 2 : needMore
      // As saxes reads a pair: the next code unit completes it, whatever it is.
      const point = 0x10000 + (code - 0xd800) * 0x400 + (text.charCodeAt(at + 1) - 0xdc00)
      return point > 0x10ffff ? disallowed : 2
    }
    return code <= 0xdfff || code >= 0xfffe ? disallowed : 1
  }

  /** The code point at `at` (a pair read as `characterWidth` reads it), its width in `width`; -1 for half a pair at the end. */
  private pointAt(text: string, at: number): number {
    const code = text.charCodeAt(at)
    if (code < 0xd800 || code > 0xdbff) {
      this.width = 1
      return code
    }
    this.width = 2
    if (at + 1 >= text.length) return this.final ? Number.NaN : needMore
    return 0x10000 + (code - 0xd800) * 0x400 + (text.charCodeAt(at + 1) - 0xdc00)
  }

  /** Where the name from `from` ends (its first non-name character), -1 when the text ends first. */
  private nameEnd(text: string, from: number): number {
    const length = text.length
    let at = from
    while (at < length) {
      const code = text.charCodeAt(at)
      if (
        (code >= 0x61 && code <= 0x7a) ||
        code === 0x5f ||
        (code >= 0x41 && code <= 0x5a) ||
        (code >= 0x30 && code <= 0x39) ||
        code === hyphen ||
        code === 0x2e ||
        code === 0x3a
      ) {
        at++
        continue
      }
      if (code < 0x80) return at
      const point = this.pointAt(text, at)
      if (point === needMore) return needMore
      if (!isNameChar(point)) return at
      at += this.width
    }
    return needMore
  }

  /** The name from `from` to `to`, as the string made for it before when the slot holds it. */
  private nameOf(text: string, from: number, to: number): string {
    const length = to - from
    let hash =
      Math.imul(length, 0x9e3779b1) ^
      Math.imul(text.charCodeAt(from), 0x85ebca6b) ^
      Math.imul(text.charCodeAt(from + (length >> 1)), 0xc2b2ae35) ^
      Math.imul(text.charCodeAt(to - 1), 0x27d4eb2f)
    hash ^= hash >>> 15
    const first = hash & (nameSlots - 1)
    let free = first
    for (let probe = 0; probe < nameProbes; probe++) {
      const slot = (first + probe) & (nameSlots - 1)
      const known = elementNames[slot]
      if (known === undefined) {
        free = slot
        break
      }
      if (known.length === length && isWrittenAt(text, from, known)) {
        this.nameSlot = slot
        return known
      }
    }
    const name = flatCopy(text.slice(from, to))
    elementNames[free] = name
    this.nameSlot = free
    return name
  }

  private skipSpaces(text: string, from: number): number {
    let at = from
    while (at < text.length && isXmlSpace(text.charCodeAt(at))) at++
    return at
  }

  private scanMarkup(text: string, at: number): number {
    if (at + 1 >= text.length) return needMore
    const code = text.charCodeAt(at + 1)
    if (code === questionMark) return this.scanInstruction(text, at + 2)
    this.xmlDeclarationPossible = false
    if (code === slash) return this.scanCloseTag(text, at + 2)
    if (code === 0x21) return this.scanBang(text, at + 2)
    return this.scanStartTag(text, at + 1)
  }

  private scanStartTag(text: string, from: number): number {
    const length = text.length
    const predicted = this.lastTag < 0 ? -1 : (followers[this.lastTag] ?? -1)
    const candidate = predicted < 0 ? undefined : elementNames[predicted]
    let nameEnd: number
    let name: string
    let slot: number
    if (candidate !== undefined && isWrittenAt(text, from, candidate) && endsName(text, from + candidate.length)) {
      // A name made before is a name: its first character needs no check of its own.
      nameEnd = from + candidate.length
      name = candidate
      slot = predicted
    } else {
      const first = this.pointAt(text, from)
      if (first === needMore) return needMore
      if (!isNameStartChar(first)) return this.fail("disallowed character in tag name.")
      nameEnd = this.nameEnd(text, from + this.width)
      if (nameEnd === needMore) return needMore
      name = this.nameOf(text, from, nameEnd)
      slot = this.nameSlot
      if (this.lastTag >= 0) followers[this.lastTag] = slot
    }
    if (this.elements >= outputLimits.maxElements) {
      return this.fail(`the document has more than ${outputLimits.maxElements} elements`)
    }
    if (this.rootClosed) return this.fail("documents may contain only one root.")
    let id: string | undefined
    let attributes = 0
    let attributeNames: Array<string> | undefined
    let duplicate = false
    let at = nameEnd
    for (;;) {
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === greaterThan || code === slash) {
        const selfClosing = code === slash
        if (selfClosing) {
          if (at + 1 >= length) return needMore
          if (text.charCodeAt(at + 1) !== greaterThan)
            return this.fail("forward-slash in opening tag not followed by >.")
        }
        if (duplicate) return this.fail("duplicate attribute.")
        return this.openElement(name, slot, id, selfClosing, at + (selfClosing ? 2 : 1))
      }
      if (!isXmlSpace(code)) {
        return this.fail(at === nameEnd ? "disallowed character in tag name." : "no whitespace between attributes.")
      }
      at = this.skipSpaces(text, at)
      if (at >= length) return needMore
      const next = text.charCodeAt(at)
      if (next === greaterThan || next === slash) continue
      const point = this.pointAt(text, at)
      if (point === needMore) return needMore
      if (!isNameStartChar(point)) return this.fail("disallowed character in attribute name.")
      const attributeStart = at
      const attributeEnd = this.nameEnd(text, at + this.width)
      if (attributeEnd === needMore) return needMore
      at = this.skipSpaces(text, attributeEnd)
      if (at >= length) return needMore
      if (text.charCodeAt(at) !== equalsSign) return this.fail("attribute without value.")
      at = this.skipSpaces(text, at + 1)
      if (at >= length) return needMore
      const quote = text.charCodeAt(at)
      if (quote !== quotationMark && quote !== apostrophe) return this.fail("unquoted attribute value.")
      const isId = attributeEnd - attributeStart === 2 && text.startsWith("id", attributeStart)
      at = this.scanAttributeValue(text, at + 1, quote, isId)
      if (at < 0) return at
      if (++attributes > outputLimits.maxAttributes) {
        return this.fail(`an element has more than ${outputLimits.maxAttributes} attributes`)
      }
      if (isId) id = this.attributeValue
      const attributeName = text.slice(attributeStart, attributeEnd)
      if (attributeNames === undefined) attributeNames = [attributeName]
      else if (attributeNames.includes(attributeName)) duplicate = true
      else attributeNames.push(attributeName)
    }
  }

  private openElement(name: string, slot: number, id: string | undefined, selfClosing: boolean, next: number): number {
    this.elements++
    const depth = this.depth
    if (depth >= outputLimits.maxDepth) return this.fail(`elements nest deeper than ${outputLimits.maxDepth} levels`)
    this.sawRoot = true
    const reported = depth <= this.quietFrom
    if (reported && !this.reader.openElement(name, depth, id)) this.quietFrom = depth
    if (this.stopped) return halted
    if (!selfClosing) {
      this.open[depth] = name
      this.openSlots[depth] = slot
      this.depth = depth + 1
      this.lastTag = slot * 2
      return next
    }
    this.lastTag = slot * 2 + 1
    return reported ? this.closeElement(depth, next, false) : next
  }

  /** An attribute value after its opening quote; the value itself is built only when `keep`. */
  private scanAttributeValue(text: string, from: number, quote: number, keep: boolean): number {
    const length = text.length
    let value = ""
    let piece = from
    let at = from
    for (;;) {
      if (at - from > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === quote) {
        if (keep) this.attributeValue = value + text.slice(piece, at)
        return at + 1
      }
      if (code === lessThan) return this.fail("disallowed character.")
      if (code === ampersand) {
        const end = this.entityEnd(text, at)
        if (end < 0) return end
        const decoded = this.entityValue(text.slice(at + 1, end))
        if (decoded === undefined) return halted
        if (keep) value += text.slice(piece, at) + decoded
        at = end + 1
        piece = at
        continue
      }
      if (code >= 0x20 && code < 0x7f) {
        at++
        continue
      }
      // Attribute-value normalisation: each tab and line end is one space.
      const lineEnd = code === newline || code === tab ? 1 : this.lineEndAt(text, at)
      if (lineEnd === needMore) return needMore
      if (lineEnd > 0) {
        if (keep) value += `${text.slice(piece, at)} `
        at += lineEnd
        piece = at
        continue
      }
      const width = this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
    }
  }

  private scanCloseTag(text: string, from: number): number {
    const depth = this.depth - 1
    const innermost = depth >= 0 ? this.open[depth] : undefined
    if (innermost !== undefined && isWrittenAt(text, from, innermost)) {
      // The usual case, `</name>` closing the innermost element, with no name built or looked up.
      const end = from + innermost.length
      if (end < text.length && text.charCodeAt(end) === greaterThan) return this.closeElement(depth, end + 1)
    }
    const nameEnd = this.nameEnd(text, from)
    if (nameEnd === needMore) return needMore
    const at = this.skipSpaces(text, nameEnd)
    if (at >= text.length) return needMore
    if (text.charCodeAt(at) !== greaterThan) return this.fail("disallowed character in closing tag.")
    if (nameEnd === from) return this.fail("empty close tag.")
    if (innermost === undefined) return this.fail("unmatched closing tag.")
    if (innermost.length !== nameEnd - from || !isWrittenAt(text, from, innermost)) {
      return this.fail("unexpected close tag.")
    }
    return this.closeElement(depth, at + 1)
  }

  private closeElement(depth: number, next: number, open = true): number {
    if (open) {
      this.depth = depth
      this.lastTag = (this.openSlots[depth] ?? 0) * 2 + 1
    }
    if (depth > this.quietFrom) return next
    if (depth === this.quietFrom) this.quietFrom = Number.MAX_SAFE_INTEGER
    this.reader.closeElement(depth)
    if (this.stopped) return halted
    if (depth === 0) this.rootClosed = true
    return next
  }

  private scanBang(text: string, from: number): number {
    if (text.length - from < 2) return needMore
    if (text.charCodeAt(from) === hyphen && text.charCodeAt(from + 1) === hyphen)
      return this.scanComment(text, from + 2)
    if (text.length - from < 7) return needMore
    if (text.startsWith("[CDATA[", from)) return this.scanCdata(text, from + 7)
    if (text.startsWith("DOCTYPE", from)) return this.scanDoctype(text, from + 7)
    return this.fail("incorrect syntax.")
  }

  private scanComment(text: string, from: number): number {
    const length = text.length
    let at = from
    for (;;) {
      if (at - from > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === hyphen) {
        if (at + 1 >= length) return needMore
        if (text.charCodeAt(at + 1) === hyphen) {
          if (at + 2 >= length) return needMore
          return text.charCodeAt(at + 2) === greaterThan ? at + 3 : this.fail("malformed comment.")
        }
        at++
        continue
      }
      const width = code >= 0x20 && code < 0x7f ? 1 : this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
    }
  }

  private scanCdata(text: string, from: number): number {
    if (!this.sawRoot || this.rootClosed) return this.fail(textOutsideRoot)
    const length = text.length
    let at = from
    for (;;) {
      const run = at - from
      if (run > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (this.capturing && run > outputLimits.maxValueLength) {
        // The value is already longer than any kept: the reading refuses it.
        this.reader.text(this.normalisedLines(text.slice(from, at)))
        if (this.stopped) return halted
      }
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === closingBracket && text.startsWith("]]>", at)) {
        if (this.capturing) {
          this.reader.text(this.normalisedLines(text.slice(from, at)))
          if (this.stopped) return halted
        }
        return at + 3
      }
      const width = code >= 0x20 && code < 0x7f ? 1 : this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
    }
  }

  private normalisedLines(text: string): string {
    const lineEnds = this.xml11 ? /\r\n|\r\u0085|\r|\u0085|\u2028/g : /\r\n?/g
    return text.replace(lineEnds, "\n")
  }

  /** A processing instruction or, at the very start, the XML declaration, from after `<?`. */
  private scanInstruction(text: string, from: number): number {
    const length = text.length
    if (from >= length) return needMore
    const first = this.pointAt(text, from)
    if (first === needMore) return needMore
    if (!isNameStartChar(first)) {
      return this.fail(
        first === questionMark || isXmlSpace(first)
          ? "processing instruction without a target."
          : "disallowed character in processing instruction name.",
      )
    }
    const targetEnd = this.nameEnd(text, from + this.width)
    if (targetEnd === needMore) return needMore
    const ending = text.charCodeAt(targetEnd)
    if (ending !== questionMark && !isXmlSpace(ending)) {
      return this.fail("disallowed character in processing instruction name.")
    }
    const target = targetEnd - from === 3 ? text.slice(from, targetEnd) : ""
    if (target === "xml") {
      if (!this.xmlDeclarationPossible) return this.fail("an XML declaration must be at the start of the document.")
      return this.scanXmlDeclaration(text, targetEnd)
    }
    let at = targetEnd
    for (;;) {
      if (at - targetEnd > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === questionMark) {
        if (at + 1 >= length) return needMore
        if (text.charCodeAt(at + 1) === greaterThan) break
        at++
        continue
      }
      const width = code >= 0x20 && code < 0x7f ? 1 : this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
    }
    if (target.toLowerCase() === "xml") {
      return this.fail("the XML declaration must appear at the start of the document.")
    }
    this.xmlDeclarationPossible = false
    return at + 2
  }

  /** `version`, then `encoding` and `standalone`, each `name = "value"`, from after `<?xml`. */
  private scanXmlDeclaration(text: string, from: number): number {
    const length = text.length
    const expected = [["version"], ["encoding", "standalone"], ["standalone"], []]
    let stage = 0
    let version: string | undefined
    let at = from
    for (;;) {
      at = this.skipSpaces(text, at)
      if (at >= length) return needMore
      if (text.charCodeAt(at) === questionMark) break
      const nameStart = at
      // Whatever comes first is part of the name, an equals sign too, as saxes reads it.
      for (let first = true; at < length; first = false) {
        const code = text.charCodeAt(at)
        if (!first && (code === equalsSign || code === questionMark || isXmlSpace(code))) break
        const width = this.characterWidth(text, at)
        if (width === needMore) return needMore
        if (width < 0) return this.fail("disallowed character.")
        at += width
      }
      if (at >= length) return needMore
      if (text.charCodeAt(at) === questionMark) return this.fail("XML declaration is incomplete.")
      const name = text.slice(nameStart, at)
      if (!(expected[stage] ?? []).includes(name)) return this.fail("unexpected name in the XML declaration.")
      at = this.skipSpaces(text, at)
      if (at >= length) return needMore
      if (text.charCodeAt(at) === questionMark) return this.fail("XML declaration is incomplete.")
      if (text.charCodeAt(at) !== equalsSign) return this.fail("value required.")
      at = this.skipSpaces(text, at + 1)
      if (at >= length) return needMore
      const quote = text.charCodeAt(at)
      if (quote === questionMark) return this.fail("XML declaration is incomplete.")
      if (quote !== quotationMark && quote !== apostrophe) return this.fail("value must be quoted.")
      const valueStart = ++at
      while (at < length) {
        const code = text.charCodeAt(at)
        if (code === quote || code === questionMark) break
        const width = this.characterWidth(text, at)
        if (width === needMore) return needMore
        if (width < 0) return this.fail("disallowed character.")
        at += width
      }
      if (at >= length) return needMore
      if (text.charCodeAt(at) === questionMark) return this.fail("XML declaration is incomplete.")
      const value = text.slice(valueStart, at++)
      if (name === "version") {
        if (!/^1\.[0-9]+$/.test(value)) return this.fail("version number must match /^1\\.[0-9]+$/.")
        version = value
        stage = 1
      } else if (name === "encoding") {
        if (!/^[A-Za-z][A-Za-z0-9._-]*$/.test(value)) return this.fail("malformed encoding in the XML declaration.")
        stage = 2
      } else {
        if (value !== "yes" && value !== "no") return this.fail('standalone value must be "yes" or "no".')
        stage = 3
      }
      if (at >= length) return needMore
      if (text.charCodeAt(at) === questionMark) break
      if (!isXmlSpace(text.charCodeAt(at))) return this.fail("whitespace required.")
    }
    if (at + 1 >= length) return needMore
    if (text.charCodeAt(at + 1) !== greaterThan) return this.fail("the character ? is disallowed in XML declarations.")
    if (version === undefined) return this.fail("XML declaration must contain a version.")
    this.xmlDeclarationPossible = false
    this.xml11 = version !== "1.0"
    return at + 2
  }

  private scanDoctype(text: string, from: number): number {
    if (this.doctypeSeen || this.sawRoot) return this.fail("inappropriately located doctype declaration.")
    const length = text.length
    let state = doctypeOutside
    let quote = 0
    let at = from
    for (;;) {
      if (at - from > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      const width = code >= 0x20 && code < 0x7f ? 1 : this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
      switch (state) {
        case doctypeOutside:
          if (code === greaterThan) {
            this.doctypeSeen = true
            return at
          }
          if (code === 0x5b) state = subset
          else if (code === quotationMark || code === apostrophe) {
            quote = code
            state = doctypeQuoted
          }
          break
        case doctypeQuoted:
          if (code === quote) state = doctypeOutside
          break
        case subset:
          if (code === closingBracket) state = doctypeOutside
          else if (code === lessThan) state = subsetMarkup
          else if (code === quotationMark || code === apostrophe) {
            quote = code
            state = subsetQuoted
          }
          break
        case subsetQuoted:
          if (code === quote) state = subset
          break
        case subsetMarkup:
          state = code === 0x21 ? subsetBang : code === questionMark ? subsetInstruction : subset
          break
        case subsetBang:
          state = code === hyphen ? subsetBangHyphen : subset
          break
        case subsetBangHyphen:
          state = code === hyphen ? subsetComment : subset
          break
        case subsetComment:
          if (code === hyphen) state = subsetCommentHyphen
          break
        case subsetCommentHyphen:
          state = code === hyphen ? subsetCommentEnded : subsetComment
          break
        case subsetCommentEnded:
          if (code !== greaterThan) return this.fail("malformed comment.")
          state = subset
          break
        case subsetInstruction:
          if (code === questionMark) state = subsetInstructionEnding
          break
        case subsetInstructionEnding:
          if (code === greaterThan) state = subset
          break
      }
    }
  }

  /** Where the entity reference at `from` (its `&`) ends, at its `;`. */
  private entityEnd(text: string, from: number): number {
    const length = text.length
    let at = from + 1
    for (;;) {
      if (at - from - 1 > outputLimits.maxRunLength) return this.fail(runTooLong)
      if (at >= length) return needMore
      const code = text.charCodeAt(at)
      if (code === semicolon) return at
      const width = code >= 0x20 && code < 0x7f ? 1 : this.characterWidth(text, at)
      if (width === needMore) return needMore
      if (width < 0) return this.fail("disallowed character.")
      at += width
    }
  }

  private scanTextEntity(text: string, from: number): number {
    const end = this.entityEnd(text, from)
    if (end < 0) return end
    const decoded = this.entityValue(text.slice(from + 1, end))
    if (decoded === undefined) return halted
    this.brackets = 0
    if (this.capturing) {
      this.reader.text(decoded)
      if (this.stopped) return halted
    }
    return end + 1
  }

  /** What an entity reference stands for, or `undefined` after failing when it names nothing XML defines. */
  private entityValue(name: string): string | undefined {
    if (name === "") {
      this.fail("empty entity name.")
      return undefined
    }
    if (name.charCodeAt(0) !== 0x23) {
      const value = predefinedEntities.get(name)
      if (value === undefined) this.fail("undefined entity.")
      return value
    }
    const point =
      name.charCodeAt(1) === 0x78 && /^#x[0-9a-f]+$/i.test(name)
        ? Number.parseInt(name.slice(2), 16)
        : /^#[0-9]+$/.test(name)
          ? Number.parseInt(name.slice(1), 10)
          : Number.NaN
    if (!isReferableChar(point, this.xml11)) {
      this.fail("malformed character entity.")
      return undefined
    }
    return String.fromCodePoint(point)
  }
}
