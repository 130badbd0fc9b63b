import { describe, expect, it } from "vitest"
import { parseCsvReading } from "../../src/nvsmi/CsvReadingParser.ts"
import { outputLimits } from "../../src/nvsmi/OutputLimits.ts"
import { parseXmlReading, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const uuidA = "GPU-aaaaaaaa-1111-2222-3333-444444444444"

const uuidOf = (gpu: number): string => `GPU-${gpu.toString(16).padStart(8, "0")}-1111-2222-3333-444444444444`

const documentOf = (body: string): string =>
  `<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>570.1</driver_version>${body}</nvidia_smi_log>\n`

const gpuElement = (uuid: string, extra = ""): string => `<gpu id="00000000:01:00.0"><uuid>${uuid}</uuid>${extra}</gpu>`

/** `levels` elements open at once, the root included, around one GPU. */
const nestedDocument = (levels: number): string =>
  documentOf(`${gpuElement(uuidA)}${"<a>".repeat(levels - 1)}${"</a>".repeat(levels - 1)}`)

describe("XML output limits", () => {
  it("reads a document nested to the depth limit and refuses one level more as malformed", () => {
    expect(readingFrom(parseXmlReading(nestedDocument(outputLimits.maxDepth))).gpus).toHaveLength(1)
    const error = errorFrom(parseXmlReading(nestedDocument(outputLimits.maxDepth + 1)))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain(`elements nest deeper than ${outputLimits.maxDepth} levels`)
  })

  it("refuses deep nesting as soon as it crosses the limit, not when the output ends", () => {
    const parser = new XmlReadingParser()
    // Left open, this document would be truncated; the depth is the first thing wrong with it.
    parser.write(`<nvidia_smi_log>${"<a>".repeat(outputLimits.maxDepth)}`)
    parser.write("<a>".repeat(100_000))
    const error = errorFrom(parser.end())
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain("nest deeper")
  })

  it("refuses more elements than the limit, and elements with too many attributes", () => {
    const tiny = documentOf(gpuElement(uuidA) + "<x/>".repeat(outputLimits.maxElements))
    expect(errorFrom(parseXmlReading(tiny)).message).toContain(`more than ${outputLimits.maxElements} elements`)
    const attributes = Array.from({ length: outputLimits.maxAttributes + 1 }, (_, at) => ` a${at}="1"`).join("")
    const error = errorFrom(parseXmlReading(documentOf(`${gpuElement(uuidA)}<x${attributes}/>`)))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain(`more than ${outputLimits.maxAttributes} attributes`)
  })

  it("refuses a value or a gpu id longer than the limit with a short message", () => {
    const huge = "7".repeat(3 * 1024 * 1024)
    const value = errorFrom(parseXmlReading(documentOf(gpuElement(uuidA, `<serial>${huge}</serial>`))))
    expect(value.kind).toBe("malformed")
    expect(value.message).toContain(`the value of serial is longer than ${outputLimits.maxValueLength} characters`)
    const id = errorFrom(parseXmlReading(documentOf(`<gpu id="${huge}"><uuid>${uuidA}</uuid></gpu>`)))
    expect(id.kind).toBe("malformed")
    expect(id.message.length).toBeLessThanOrEqual(200)
    expect(id.message).not.toContain("7777")
  })

  it("quotes at most 120 characters of a gpu id within the limit in a failure", () => {
    const id = "0".repeat(outputLimits.maxValueLength)
    const reading = readingFrom(
      parseXmlReading(documentOf(`${gpuElement(uuidA)}<gpu id="${id}"><uuid>N/A</uuid></gpu>`)),
    )
    expect(reading.failures).toHaveLength(1)
    expect(reading.failures[0]?.pciBusId?.length).toBeLessThanOrEqual(120)
  })

  it("reads the GPU limit and refuses one GPU more", () => {
    const gpus = (count: number) => Array.from({ length: count }, (_, gpu) => gpuElement(uuidOf(gpu))).join("")
    expect(readingFrom(parseXmlReading(documentOf(gpus(outputLimits.maxGpus)))).gpus).toHaveLength(outputLimits.maxGpus)
    const error = errorFrom(parseXmlReading(documentOf(gpus(outputLimits.maxGpus + 1))))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain(`more than ${outputLimits.maxGpus} GPUs`)
  })

  it("refuses every construct of the XML reader made of its own delimiters once it crosses the run limit", () => {
    const past = outputLimits.maxRunLength + 1
    const constructs = [
      ["a comment", "<!--", "-a", "-->"],
      ["a CDATA section", "<x><![CDATA[", "]a", "]]></x>"],
      ["a processing instruction", "<?pi ", "?a", "?>"],
      ["an attribute value", "<x y='", '"', "'/>"],
      ["an entity reference", "<x>&", "a", ";</x>"],
    ] as const
    for (const [what, open, unit, close] of constructs) {
      const parser = new XmlReadingParser()
      // Left unclosed, the document would be truncated: the run is the first thing wrong with it.
      parser.write(`<nvidia_smi_log>${gpuElement(uuidA)}${open}`)
      parser.write(unit.repeat(Math.ceil(past / unit.length)))
      const error = errorFrom(parser.end())
      expect(error.kind, what).toBe("malformed")
      expect(error.message, what).toContain(`longer than ${outputLimits.maxRunLength} characters`)
      expect(error.message.length, what).toBeLessThanOrEqual(160)
      const closed = errorFrom(
        parseXmlReading(documentOf(`${gpuElement(uuidA)}${open}${unit.repeat(2 * past)}${close}`)),
      )
      expect(closed.kind, what).toBe("malformed")
    }
    const doctype = `<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY e "${"'>".repeat(past)}">]>\n`
    expect(errorFrom(parseXmlReading(`${doctype}<nvidia_smi_log></nvidia_smi_log>`)).kind).toBe("malformed")
  })

  it("reads a kept value given as CDATA as its text, under the value limit", () => {
    const serial = (value: string) =>
      readingFrom(parseXmlReading(documentOf(gpuElement(uuidA, `<serial>${value}</serial>`)))).gpus[0]?.serial
    expect(serial("<![CDATA[0654922031993]]>")).toBe("0654922031993")
    expect(serial("065<![CDATA[4922]]>031993")).toBe("0654922031993")
    const uuid = readingFrom(
      parseXmlReading(documentOf(`<gpu id="00000000:01:00.0"><uuid><![CDATA[${uuidA}]]></uuid></gpu>`)),
    )
    expect(uuid.gpus[0]?.uuid).toBe(uuidA)
    const long = errorFrom(
      parseXmlReading(
        documentOf(gpuElement(uuidA, `<serial><![CDATA[${"7".repeat(outputLimits.maxValueLength + 1)}]]></serial>`)),
      ),
    )
    expect(long.message).toContain(`the value of serial is longer than ${outputLimits.maxValueLength} characters`)
  })

  it("reads a character whose two UTF-16 halves straddle a slice of a long string", () => {
    const head = `<nvidia_smi_log><gpu id="00000000:01:00.0"><uuid>${uuidA}</uuid><timestamp>`
    const beforeProduct = "</timestamp><product_name>"
    const padding = "y".repeat(32 * 1024 - 1 - head.length - beforeProduct.length)
    const text = `${head}${padding}${beforeProduct}😀 GPU</product_name></gpu></nvidia_smi_log>`
    expect(text.indexOf("😀")).toBe(32 * 1024 - 1)
    expect(readingFrom(parseXmlReading(text)).gpus[0]?.product).toBe("😀 GPU")
  })
})

describe("device-handle lines before the output", () => {
  const lines = (count: number) =>
    Array.from(
      { length: count },
      (_, gpu) =>
        `Unable to determine the device handle for GPU${gpu}: 0000:${(gpu % 256).toString(16).padStart(2, "0")}:00.0: Unknown Error\n`,
    ).join("")

  it("reads up to the GPU limit of them and refuses one more, before XML and before CSV", () => {
    const xml = documentOf(gpuElement(uuidA))
    const csv = `index, uuid\n${outputLimits.maxGpus}, ${uuidA}\n`
    expect(readingFrom(parseXmlReading(lines(outputLimits.maxGpus) + xml)).failures).toHaveLength(outputLimits.maxGpus)
    expect(readingFrom(parseCsvReading(lines(outputLimits.maxGpus) + csv)).failures).toHaveLength(outputLimits.maxGpus)
    for (const error of [
      errorFrom(parseXmlReading(lines(outputLimits.maxGpus + 1) + xml)),
      errorFrom(parseXmlReading(lines(outputLimits.maxGpus + 1))),
      errorFrom(parseCsvReading(lines(outputLimits.maxGpus + 1) + csv)),
    ]) {
      expect(error.kind).toBe("malformed")
      expect(error.message).toContain(`more than ${outputLimits.maxGpus} GPUs whose device handle failed`)
    }
  })
})

describe("CSV output limits", () => {
  const header = "index, uuid, serial\n"

  it("refuses more GPU rows than the limit", () => {
    const rows = (count: number) => Array.from({ length: count }, (_, gpu) => `${gpu}, ${uuidOf(gpu)}, 1\n`).join("")
    expect(readingFrom(parseCsvReading(header + rows(outputLimits.maxGpus))).gpus).toHaveLength(outputLimits.maxGpus)
    const error = errorFrom(parseCsvReading(header + rows(outputLimits.maxGpus + 1)))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain(`more than ${outputLimits.maxGpus} GPUs`)
  })

  it("refuses a read cell longer than the limit with a short message, and ignores long unread cells", () => {
    const huge = "7".repeat(outputLimits.maxValueLength + 1)
    const error = errorFrom(parseCsvReading(`${header}0, ${uuidA}, ${huge}\n`))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain("cell 3 of CSV row 1")
    expect(error.message.length).toBeLessThanOrEqual(200)
    expect(readingFrom(parseCsvReading(`index, uuid, clocks.sm\n0, ${uuidA}, ${huge}\n`)).gpus).toHaveLength(1)
  })

  it("refuses a line longer than the limit, whatever it holds, with a short message", () => {
    for (const row of [
      `0${",".repeat(outputLimits.maxLineLength)}`,
      `0, "${"x".repeat(outputLimits.maxLineLength)}", 1`,
    ]) {
      const error = errorFrom(parseCsvReading(`${header}${row}\n`))
      expect(error.kind).toBe("malformed")
      expect(error.message).toContain(
        `line 2 of the CSV output is longer than ${outputLimits.maxLineLength} characters`,
      )
    }
  })

  it("refuses more lines than the limit, empty ones included", () => {
    const row = `0, ${uuidA}, 1\n`
    expect(readingFrom(parseCsvReading(`${header}${row}${"\n".repeat(outputLimits.maxLines - 3)}`)).gpus).toHaveLength(
      1,
    )
    const error = errorFrom(parseCsvReading(`${header}${row}${"\n".repeat(outputLimits.maxLines)}`))
    expect(error.kind).toBe("malformed")
    expect(error.message).toContain(`more than ${outputLimits.maxLines} lines`)
  })
})
