import { StringDecoder } from "node:string_decoder"
import * as Result from "effect/Result"
import type { GpuFailure, NodeReading } from "../domain/NodeReading.ts"
import { classifyFailureOutput } from "./FailureOutput.ts"
import {
  gpuChildDepth,
  gpuElement,
  longestName,
  type RootField,
  rootElementName,
  rootFields,
  type Section,
  sectionSlots,
} from "./KeptXmlElements.ts"
import { availableValue, detached, gpuConditionOf } from "./NotAvailable.ts"
import {
  EmptyOutput,
  MalformedOutput,
  NotNvidiaSmiOutput,
  type NvsmiError,
  OutputTooLarge,
  TruncatedOutput,
} from "./NvsmiError.ts"
import { outputExcerpt } from "./OutputExcerpt.ts"
import { outputLimits } from "./OutputLimits.ts"
import { preambleLineOf } from "./PreambleLine.ts"
import type { ReportedGpu, ReportedGpuField } from "./ReportedGpu.ts"
import { emptyReportedHealth, type ReportedHealthField } from "./ReportedHealth.ts"
import { type ReportedReading, readingOf } from "./ReportedReading.ts"
import { XmlScanner } from "./XmlScanner.ts"

export const defaultMaxOutputBytes = 8 * 1024 * 1024

export interface XmlReadingParserOptions {
  /** Output beyond this many bytes fails the reading with `OutputTooLarge`; defaults to 8 MiB. */
  readonly maxBytes?: number
}

const retainedPreambleLength = 64 * 1024
// Decoding in slices keeps each string below V8's large-object threshold, which is several times faster;
// feeding the scanner in slices lets it stop within one slice of a broken limit.
const decodeSliceBytes = 32 * 1024
const textSliceLength = 32 * 1024
const lessThan = 0x3c

type Capture = "none" | "root" | "gpu" | "health" | "legacy-module-id"

interface GpuDraft {
  readonly reported: { -readonly [Field in ReportedGpuField]?: string }
  readonly health: ReturnType<typeof emptyReportedHealth>
  readonly busIdAttribute: string | undefined
  legacyModuleId: string | undefined
}

/**
 * Strict, streaming reader of `nvidia-smi -q -x`. Feed it the output as it arrives (bytes or text), then
 * `end()` gives the node reading or a typed error: truncated or malformed XML, a root other than
 * `nvidia_smi_log`, output over the byte cap, or the failure nvidia-smi printed instead of a document.
 * Lines nvidia-smi prints before the document ("Unable to determine the device handle for GPU…") become
 * failures of the reading; the GPUs in the document are still returned, each with its identity and its
 * health signals (the elements of `gpuElement`). A document that crosses one of `outputLimits` (nesting,
 * elements, attributes, value length, GPUs) is `malformed` from that point on, and nothing of an element
 * the reading does not use is kept: `XmlScanner` checks its well-formedness without cutting out its text.
 */
export class XmlReadingParser {
  private readonly maxBytes: number
  private readonly decoder = new StringDecoder("utf8")
  private readonly scanner = new XmlScanner({
    openElement: (name, depth, id) => this.openElement(name, depth, id),
    closeElement: (depth) => this.closeElement(depth),
    text: (piece) => this.collectText(piece),
  })
  private receivedBytes = 0
  private inDocument = false
  private failure: NvsmiError | undefined
  private outcome: Result.Result<NodeReading, NvsmiError> | undefined

  private pendingLine = ""
  private retainedPreamble = ""
  private unexpectedPreamble: string | undefined
  private readonly preambleFailures: Array<GpuFailure> = []

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
        this.scanner.end()
        this.rejectDocument()
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

  private feedDocument(text: string): void {
    this.scanner.write(text)
    this.rejectDocument()
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

  /** Whether the elements inside this one matter to the reading: only those of the root, a GPU or a kept section. */
  private openElement(name: string, depth: number, id: string | undefined): boolean {
    if (depth === 0) {
      if (name !== rootElementName) {
        this.failure = new NotNvidiaSmiOutput({ excerpt: outputExcerpt(`<${name}>`) })
        this.release()
      }
      return true
    }
    if (depth === 1) {
      if (name === "gpu") {
        this.openGpu(id)
        return true
      }
      const field = rootFields.get(name)
      if (field !== undefined) {
        this.startCapture("root", field, depth)
      }
      return false
    }
    if (this.gpu === undefined) {
      return false
    }
    const parent = depth === gpuChildDepth ? gpuElement : depth < sectionSlots ? this.sections[depth - 1] : undefined
    if (parent === undefined) {
      return false
    }
    if (name.length >= longestName || parent.nameLengths[name.length] === 0) {
      return false
    }
    const child = parent.children.get(name)
    if (child === undefined) {
      return false
    }
    if (child._tag === "section") {
      if (depth < sectionSlots) {
        this.sections[depth] = child
      }
      return true
    }
    this.startCapture(child._tag, child.key, depth)
    return false
  }

  private closeElement(depth: number): void {
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
    }
  }

  private openGpu(busIdAttribute: string | undefined): void {
    if (this.gpus.length >= outputLimits.maxGpus) {
      this.fail(`the document lists more than ${outputLimits.maxGpus} GPUs`)
    } else if (busIdAttribute !== undefined && busIdAttribute.length > outputLimits.maxValueLength) {
      this.fail(`the id of a <gpu> is longer than ${outputLimits.maxValueLength} characters`)
    } else {
      this.gpu = {
        reported: {},
        health: emptyReportedHealth(),
        busIdAttribute: busIdAttribute === undefined ? undefined : detached(busIdAttribute),
        legacyModuleId: undefined,
      }
    }
  }

  /** Text of the value being kept (a CDATA section in it too), under the same limit. */
  private collectText(piece: string): void {
    this.captured += piece
    if (this.captured.length > outputLimits.maxValueLength) {
      this.fail(`the value of ${this.captureKey} is longer than ${outputLimits.maxValueLength} characters`)
    }
  }

  private fail(detail: string): void {
    this.failure = new MalformedOutput({ detail })
    this.release()
  }

  /** Takes the scanner's verdict: output that is not well-formed, or that ends before its root element does. */
  private rejectDocument(): void {
    if (this.failure !== undefined) return
    const { problem, truncation } = this.scanner
    if (problem !== undefined) {
      this.failure = new MalformedOutput({ detail: outputExcerpt(problem) })
    } else if (truncation !== undefined) {
      this.failure = new TruncatedOutput({ detail: outputExcerpt(truncation) })
    }
    if (this.failure !== undefined) this.release()
  }

  private startCapture(capture: Capture, key: string, depth: number): void {
    this.capture = capture
    this.captureKey = key
    this.captureDepth = depth
    this.captured = ""
    // Text is cut out only while a value is kept: the scanner checks the rest without making strings of it.
    this.scanner.capturing = true
  }

  private finishCapture(): void {
    this.scanner.capturing = false
    // A copy now: a view kept until `end()` keeps the whole decoded slice it was cut from alive, and the
    // readings in flight carried those slices through the young generation's collections into the old one.
    const value = detached(this.captured)
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
    this.scanner.stop()
    this.pendingLine = ""
    this.retainedPreamble = ""
    this.captured = ""
  }
}

/** Parses a complete `nvidia-smi -q -x` output at once. */
export const parseXmlReading = (
  output: Uint8Array | string,
  options: XmlReadingParserOptions = {},
): Result.Result<NodeReading, NvsmiError> => {
  const parser = new XmlReadingParser(options)
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
