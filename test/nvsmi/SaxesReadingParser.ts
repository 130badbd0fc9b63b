import { StringDecoder } from "node:string_decoder"
import * as Result from "effect/Result"
import { SaxesParser, type SaxesTagPlain } from "saxes"
import type { GpuFailure, NodeReading } from "../../src/domain/NodeReading.ts"
import { classifyFailureOutput } from "../../src/nvsmi/FailureOutput.ts"
import {
  gpuChildDepth,
  gpuElement,
  longestName,
  type RootField,
  rootElementName,
  rootFields,
  type Section,
  sectionSlots,
} from "../../src/nvsmi/KeptXmlElements.ts"
import { availableValue, gpuConditionOf } from "../../src/nvsmi/NotAvailable.ts"
import {
  EmptyOutput,
  MalformedOutput,
  NotNvidiaSmiOutput,
  type NvsmiError,
  OutputTooLarge,
  TruncatedOutput,
} from "../../src/nvsmi/NvsmiError.ts"
import { outputExcerpt } from "../../src/nvsmi/OutputExcerpt.ts"
import { outputLimits } from "../../src/nvsmi/OutputLimits.ts"
import { preambleLineOf } from "../../src/nvsmi/PreambleLine.ts"
import type { ReportedGpu, ReportedGpuField } from "../../src/nvsmi/ReportedGpu.ts"
import { emptyReportedHealth, type ReportedHealthField } from "../../src/nvsmi/ReportedHealth.ts"
import { type ReportedReading, readingOf } from "../../src/nvsmi/ReportedReading.ts"
import { defaultMaxOutputBytes, type XmlReadingParserOptions } from "../../src/nvsmi/XmlReadingParser.ts"

const retainedPreambleLength = 64 * 1024
// Decoding in slices keeps each string below V8's large-object threshold, which is several times faster;
// feeding the XML reader in slices lets it stop within one slice of a broken limit.
const decodeSliceBytes = 32 * 1024
const textSliceLength = 32 * 1024
const lessThan = 0x3c

type Capture = "none" | "root" | "gpu" | "health" | "legacy-module-id"

/**
 * What the XML reader holds of the piece it is reading. It builds a comment, a CDATA section or a
 * processing instruction made of its own delimiter characters one character at a time, which costs tens of
 * bytes per character, so the parser checks these after every slice and refuses a run past
 * `maxRunLength` (saxes 6 keeps them in these fields; the worst-input tests fail if that changes).
 */
interface SaxesBuffers {
  readonly text: string
  readonly entity: string
}

interface GpuDraft {
  readonly reported: { -readonly [Field in ReportedGpuField]?: string }
  readonly health: ReturnType<typeof emptyReportedHealth>
  readonly busIdAttribute: string | undefined
  legacyModuleId: string | undefined
}

/**
 * The reader of `nvidia-smi -q -x` as it was built on saxes, kept as the reference `XmlScanner` is checked
 * against: the same readings, and the same kind of error for every output saxes refuses.
 *
 * Strict, streaming reader of `nvidia-smi -q -x`. Feed it the output as it arrives (bytes or text), then
 * `end()` gives the node reading or a typed error: truncated or malformed XML, a root other than
 * `nvidia_smi_log`, output over the byte cap, or the failure nvidia-smi printed instead of a document.
 * Lines nvidia-smi prints before the document ("Unable to determine the device handle for GPU…") become
 * failures of the reading; the GPUs in the document are still returned, each with its identity and its
 * health signals (the elements of `gpuElement`). A document that crosses one of `outputLimits` (nesting,
 * elements, attributes, value length, GPUs) is `malformed` from that point on, and nothing of an element
 * the reading does not use is kept.
 */
export class SaxesReadingParser {
  private readonly maxBytes: number
  private readonly decoder = new StringDecoder("utf8")
  private readonly sax = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false })
  private receivedBytes = 0
  private inDocument = false
  private closing = false
  private rootClosed = false
  private failure: NvsmiError | undefined
  private outcome: Result.Result<NodeReading, NvsmiError> | undefined

  private pendingLine = ""
  private retainedPreamble = ""
  private unexpectedPreamble: string | undefined
  private readonly preambleFailures: Array<GpuFailure> = []

  private depth = 0
  private elements = 0
  private attributes = 0
  private readonly root: { -readonly [Field in RootField]?: string } = {}
  private readonly gpus: Array<ReportedGpu> = []
  private gpu: GpuDraft | undefined
  /** The kept section open at each depth below a `<gpu>`, `undefined` where the element is not kept. */
  private readonly sections: Array<Section | undefined> = new Array(sectionSlots).fill(undefined)
  private capture: Capture = "none"
  private captureKey = ""
  private captureDepth = -1
  private captured = ""

  constructor(options: XmlReadingParserOptions = {}) {
    this.maxBytes = options.maxBytes ?? defaultMaxOutputBytes
    this.sax.on("opentagstart", this.startElement)
    this.sax.on("attribute", this.countAttribute)
    this.sax.on("opentag", this.openElement)
    this.sax.on("closetag", this.closeElement)
    this.sax.on("error", this.rejectDocument)
    // A value given as a CDATA section is text, under the same limit; outside a kept value it is ignored.
    this.sax.on("cdata", this.collectCdata)
  }

  write(chunk: Uint8Array | string): void {
    if (this.outcome !== undefined || this.failure !== undefined) {
      return
    }
    this.receivedBytes += typeof chunk === "string" ? Buffer.byteLength(chunk, "utf8") : chunk.byteLength
    if (this.receivedBytes > this.maxBytes) {
      this.failure = new OutputTooLarge({ maxBytes: this.maxBytes, receivedBytes: this.receivedBytes })
      this.release()
      return
    }
    if (typeof chunk === "string") {
      // A character split between two slices is joined again by the XML reader and the line buffer.
      for (let from = 0; from < chunk.length && this.failure === undefined; from += textSliceLength) {
        this.consume(chunk.slice(from, from + textSliceLength))
      }
      return
    }
    for (let offset = 0; offset < chunk.byteLength && this.failure === undefined; offset += decodeSliceBytes) {
      this.consume(this.decoder.write(chunk.subarray(offset, offset + decodeSliceBytes)))
    }
  }

  end(): Result.Result<NodeReading, NvsmiError> {
    if (this.outcome !== undefined) {
      return this.outcome
    }
    if (this.failure === undefined) {
      const rest = this.decoder.end()
      if (rest !== "") {
        this.consume(rest)
      }
    }
    if (this.failure === undefined) {
      if (this.inDocument) {
        this.closing = true
        this.sax.close()
      } else {
        this.failure = this.missingDocument()
      }
    }
    this.outcome = this.failure === undefined ? readingOf(this.reported()) : Result.fail(this.failure)
    this.release()
    return this.outcome
  }

  private consume(text: string): void {
    if (this.inDocument) {
      this.feedDocument(text)
      return
    }
    let from = 0
    if (this.pendingLine !== "") {
      const lineEnd = text.indexOf("\n")
      if (lineEnd < 0) {
        this.holdPendingLine(text)
        return
      }
      this.preambleLine(this.pendingLine + text.slice(0, lineEnd))
      this.pendingLine = ""
      from = lineEnd + 1
    }
    while (from < text.length && this.failure === undefined) {
      let start = from
      while (start < text.length && isBlank(text.charCodeAt(start))) {
        start++
      }
      if (start === text.length) {
        return
      }
      if (text.charCodeAt(start) === lessThan) {
        this.startDocument(text.slice(start))
        return
      }
      const lineEnd = text.indexOf("\n", start)
      if (lineEnd < 0) {
        this.holdPendingLine(text.slice(start))
        return
      }
      this.preambleLine(text.slice(start, lineEnd))
      from = lineEnd + 1
    }
  }

  private holdPendingLine(text: string): void {
    const room = retainedPreambleLength - this.pendingLine.length
    if (room > 0) {
      this.pendingLine += text.length <= room ? text : text.slice(0, room)
    }
  }

  private preambleLine(line: string): void {
    if (this.retainedPreamble.length < retainedPreambleLength) {
      this.retainedPreamble += `${line.slice(0, retainedPreambleLength - this.retainedPreamble.length)}\n`
    }
    const preamble = preambleLineOf(line)
    if (preamble === undefined) {
      this.unexpectedPreamble ??= line
    } else if (preamble._tag === "DeviceHandle") {
      if (this.preambleFailures.length >= outputLimits.maxGpus) {
        this.fail(`the output lists more than ${outputLimits.maxGpus} GPUs whose device handle failed`)
        return
      }
      this.preambleFailures.push(preamble.failure)
    }
  }

  private startDocument(text: string): void {
    if (this.unexpectedPreamble !== undefined) {
      this.failure = new MalformedOutput({
        detail: `unexpected text before the XML document: ${outputExcerpt(this.unexpectedPreamble)}`,
      })
      this.release()
      return
    }
    this.inDocument = true
    this.retainedPreamble = ""
    this.feedDocument(text)
  }

  /** Feeds one slice to the XML reader and refuses a piece it holds that has grown past the run limit. */
  private feedDocument(text: string): void {
    this.sax.write(text)
    if (this.failure !== undefined) return
    const held = this.sax as unknown as SaxesBuffers
    if (this.capture !== "none" && this.captured.length + held.text.length > outputLimits.maxValueLength) {
      this.fail(`the value of ${this.captureKey} is longer than ${outputLimits.maxValueLength} characters`)
    } else if (held.text.length > outputLimits.maxRunLength || held.entity.length > outputLimits.maxRunLength) {
      this.fail(
        `a text, comment, CDATA section, processing instruction, doctype or attribute value is longer than ${outputLimits.maxRunLength} characters`,
      )
    }
  }

  private missingDocument(): NvsmiError {
    if (this.pendingLine !== "") {
      this.preambleLine(this.pendingLine)
      this.pendingLine = ""
    }
    if (this.failure !== undefined) {
      return this.failure
    }
    if (this.retainedPreamble.trim() === "") {
      return new EmptyOutput()
    }
    return (
      classifyFailureOutput(this.retainedPreamble) ??
      new NotNvidiaSmiOutput({ excerpt: outputExcerpt(this.retainedPreamble) })
    )
  }

  private readonly startElement = (): void => {
    this.attributes = 0
    if (this.failure === undefined && ++this.elements > outputLimits.maxElements) {
      this.fail(`the document has more than ${outputLimits.maxElements} elements`)
    }
  }

  private readonly countAttribute = (): void => {
    if (this.failure === undefined && ++this.attributes > outputLimits.maxAttributes) {
      this.fail(`an element has more than ${outputLimits.maxAttributes} attributes`)
    }
  }

  private readonly openElement = (tag: SaxesTagPlain): void => {
    if (this.failure !== undefined) {
      return
    }
    const depth = this.depth++
    if (this.depth > outputLimits.maxDepth) {
      this.fail(`elements nest deeper than ${outputLimits.maxDepth} levels`)
      return
    }
    const name = tag.name
    if (depth === 0) {
      if (name !== rootElementName) {
        this.failure = new NotNvidiaSmiOutput({ excerpt: outputExcerpt(`<${name}>`) })
      }
      return
    }
    if (depth === 1) {
      if (name === "gpu") {
        this.openGpu(tag.attributes.id)
        return
      }
      const field = rootFields.get(name)
      if (field !== undefined) {
        this.startCapture("root", field, depth)
      }
      return
    }
    if (this.gpu === undefined) {
      return
    }
    const parent = depth === gpuChildDepth ? gpuElement : depth < sectionSlots ? this.sections[depth - 1] : undefined
    if (parent === undefined) {
      return
    }
    if (name.length >= longestName || parent.nameLengths[name.length] === 0) {
      return
    }
    const child = parent.children.get(name)
    if (child === undefined) {
      return
    }
    if (child._tag === "section") {
      if (depth < sectionSlots) {
        this.sections[depth] = child
      }
    } else {
      this.startCapture(child._tag, child.key, depth)
    }
  }

  private readonly closeElement = (): void => {
    if (this.failure !== undefined) {
      return
    }
    const depth = --this.depth
    if (this.capture !== "none" && depth === this.captureDepth) {
      this.finishCapture()
    }
    if (depth >= gpuChildDepth) {
      if (depth < sectionSlots && this.sections[depth] !== undefined) {
        this.sections[depth] = undefined
      }
    } else if (depth === 1 && this.gpu !== undefined) {
      this.gpus.push(completeGpu(this.gpu))
      this.gpu = undefined
    } else if (depth === 0) {
      this.rootClosed = true
    }
  }

  private openGpu(busIdAttribute: string | undefined): void {
    if (this.gpus.length >= outputLimits.maxGpus) {
      this.fail(`the document lists more than ${outputLimits.maxGpus} GPUs`)
    } else if (busIdAttribute !== undefined && busIdAttribute.length > outputLimits.maxValueLength) {
      this.fail(`the id of a <gpu> is longer than ${outputLimits.maxValueLength} characters`)
    } else {
      this.gpu = { reported: {}, health: emptyReportedHealth(), busIdAttribute, legacyModuleId: undefined }
    }
  }

  private readonly collectText = (text: string): void => {
    if (this.failure !== undefined) {
      return
    }
    this.captured += text
    if (this.captured.length > outputLimits.maxValueLength) {
      this.fail(`the value of ${this.captureKey} is longer than ${outputLimits.maxValueLength} characters`)
    }
  }

  private readonly collectCdata = (text: string): void => {
    if (this.capture !== "none") {
      this.collectText(text)
    }
  }

  private fail(detail: string): void {
    this.failure = new MalformedOutput({ detail })
    this.release()
  }

  private readonly rejectDocument = (error: Error): void => {
    if (this.failure !== undefined) {
      return
    }
    const detail = outputExcerpt(error.message)
    this.failure = this.closing && !this.rootClosed ? new TruncatedOutput({ detail }) : new MalformedOutput({ detail })
  }

  private startCapture(capture: Capture, key: string, depth: number): void {
    this.capture = capture
    this.captureKey = key
    this.captureDepth = depth
    this.captured = ""
    // Text is reported only while a value is kept: the XML reader then skips the whitespace between elements.
    this.sax.on("text", this.collectText)
  }

  private finishCapture(): void {
    this.sax.off("text")
    const value = this.captured
    const key = this.captureKey
    this.captured = ""
    switch (this.capture) {
      case "root":
        this.root[key as RootField] ??= value
        break
      case "gpu":
        if (this.gpu !== undefined) {
          this.gpu.reported[key as ReportedGpuField] ??= value
        }
        break
      case "health":
        if (this.gpu !== undefined) {
          this.gpu.health[key as ReportedHealthField] ??= value
        }
        break
      case "legacy-module-id":
        if (this.gpu !== undefined) {
          this.gpu.legacyModuleId ??= value
        }
        break
      case "none":
        break
    }
    this.capture = "none"
    this.captureDepth = -1
  }

  private reported(): ReportedReading {
    return {
      format: "xml",
      gpus: this.gpus,
      preambleFailures: this.preambleFailures,
      driverVersion: this.root.driverVersion,
      kmdVersion: this.root.kmdVersion,
      cudaVersion: this.root.cudaVersion,
      cudaUmdVersion: this.root.cudaUmdVersion,
      attachedGpus: this.root.attachedGpus,
    }
  }

  private release(): void {
    this.pendingLine = ""
    this.retainedPreamble = ""
    this.captured = ""
  }
}

/** Parses a complete `nvidia-smi -q -x` output at once, with saxes. */
export const parseXmlReadingWithSaxes = (
  output: Uint8Array | string,
  options: XmlReadingParserOptions = {},
): Result.Result<NodeReading, NvsmiError> => {
  const parser = new SaxesReadingParser(options)
  parser.write(output)
  return parser.end()
}

const completeGpu = (draft: GpuDraft): ReportedGpu => {
  const reported = draft.reported
  if (isAbsent(reported.pciBusId) && draft.busIdAttribute !== undefined) {
    reported.pciBusId = draft.busIdAttribute
  }
  if (isAbsent(reported.moduleId) && draft.legacyModuleId !== undefined) {
    reported.moduleId = draft.legacyModuleId
  }
  return { ...reported, health: draft.health }
}

const isAbsent = (raw: string | undefined): boolean =>
  availableValue(raw) === undefined && gpuConditionOf(raw) === undefined

const isBlank = (code: number): boolean =>
  code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0xfeff
