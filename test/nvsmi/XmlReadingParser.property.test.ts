import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { nvsmiErrorKinds } from "../../src/nvsmi/NvsmiError.ts"
import { parseNvsmiOutput } from "../../src/nvsmi/NvsmiOutput.ts"
import { parseXmlReading, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import { describeWithFixtures, readFixture } from "../support/fixtures.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const rootClose = Buffer.from("</nvidia_smi_log>")

const preamble = "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n"

/** A document with multi-byte characters (2, 3 and 4 UTF-8 bytes), entities, comments and CRLF. */
const generatedDocument = Buffer.from(
  [
    preamble,
    '<?xml version="1.0" ?>',
    '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">',
    "<nvidia_smi_log>",
    "\t<!-- driver_version is deprecated -->",
    "\t<driver_version>615.23</driver_version>",
    "\t<cuda_version>13.3</cuda_version>",
    "\t<attached_gpus>3</attached_gpus>",
    ...[0, 2, 3].map((index) =>
      [
        `\t<gpu id="00000000:0${index}:00.0">`,
        `\t\t<product_name>NVIDIA Tésla ✓ 😀 &amp; Co #${index}</product_name>`,
        "\t\t<mig_devices>\r\n\t\t\tNone\r\n\t\t</mig_devices>",
        `\t\t<serial>0${index}23456789012</serial>`,
        `\t\t<uuid>GPU-0000000${index}-aaaa-bbbb-cccc-0123456789ab</uuid>`,
        "\t\t<processes/>",
        `\t\t<platformInfo><chassis_serial_number>18212251908${index}9</chassis_serial_number></platformInfo>`,
        "\t</gpu>",
      ].join("\r\n"),
    ),
    "</nvidia_smi_log>",
    "",
  ].join("\r\n"),
)

const documentEnd = (document: Buffer): number => document.lastIndexOf(rootClose) + rootClose.length

const documentStart = (document: Buffer): number => document.indexOf("<")

const splitAt = (bytes: Buffer, offsets: ReadonlyArray<number>): Array<Buffer> => {
  const cuts = [...new Set(offsets)].sort((a, b) => a - b)
  const chunks: Array<Buffer> = []
  let from = 0
  for (const cut of cuts) {
    chunks.push(bytes.subarray(from, cut))
    from = cut
  }
  chunks.push(bytes.subarray(from))
  return chunks
}

const parseChunks = (chunks: ReadonlyArray<Uint8Array | string>) => {
  const parser = new XmlReadingParser()
  for (const chunk of chunks) {
    parser.write(chunk)
  }
  return parser.end()
}

const truncationProperty = (document: Buffer, numRuns: number) =>
  fc.assert(
    fc.property(fc.integer({ min: documentStart(document) + 1, max: documentEnd(document) - 1 }), (cut) => {
      expect(errorFrom(parseXmlReading(document.subarray(0, cut))).kind).toBe("truncated")
    }),
    { numRuns },
  )

const chunkingProperty = (document: Buffer, numRuns: number) => {
  const whole = parseXmlReading(document)
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: document.length - 1 }), { maxLength: 24 }), (offsets) => {
      expect(parseChunks(splitAt(document, offsets))).toStrictEqual(whole)
    }),
    { numRuns },
  )
}

describe("XmlReadingParser properties", () => {
  it("reads the generated document with its preamble failure, entities and multi-byte names", () => {
    const reading = readingFrom(parseXmlReading(generatedDocument))
    expect(reading.gpus.map((gpu) => [gpu.index, gpu.product, gpu.serial])).toStrictEqual([
      [0, "NVIDIA Tésla ✓ 😀 & Co #0", "0023456789012"],
      [2, "NVIDIA Tésla ✓ 😀 & Co #2", "0223456789012"],
      [3, "NVIDIA Tésla ✓ 😀 & Co #3", "0323456789012"],
    ])
    expect(reading.failures).toHaveLength(1)
  })

  it("fails with a truncation error for every cut before the root element is closed", () => {
    truncationProperty(generatedDocument, 200)
  })

  it("treats a document whose trailing whitespace is missing as complete", () => {
    const end = documentEnd(generatedDocument)
    expect(readingFrom(parseXmlReading(generatedDocument.subarray(0, end))).gpus).toHaveLength(3)
  })

  it("gives the same result however the bytes are split into chunks, even inside a UTF-8 character", () => {
    chunkingProperty(generatedDocument, 200)
  })

  it("gives the same result when fed as text chunks split at any position", () => {
    const text = generatedDocument.toString("utf8")
    const whole = parseXmlReading(text)
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 24 }), (offsets) => {
        const cuts = [0, ...new Set(offsets)].sort((a, b) => a - b)
        const chunks = cuts.map((cut, position) => text.slice(cut, cuts[position + 1]))
        expect(parseChunks(chunks)).toStrictEqual(whole)
      }),
      { numRuns: 100 },
    )
  })

  it("never throws on arbitrary text or bytes and answers with a typed error", () => {
    const xmlish = fc
      .array(
        fc.constantFrom(
          "<",
          ">",
          "/",
          "</",
          "/>",
          "nvidia_smi_log",
          "gpu",
          "uuid",
          " id=",
          '"',
          "&amp;",
          "&",
          ";",
          "<!--",
          "-->",
          "<?xml",
          "?>",
          "<!DOCTYPE",
          "GPU-aaaaaaaa-1111-2222-3333-444444444444",
          "N/A",
          ",",
          "\n",
          "\r",
          " ",
          "é",
          "\u0000",
          preamble,
        ),
        { maxLength: 60 },
      )
      .map((parts) => parts.join(""))
    const typed = (result: ReturnType<typeof parseXmlReading>) =>
      result._tag === "Success" || nvsmiErrorKinds.includes(result.failure.kind)
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), xmlish), (text) => {
        expect(typed(parseXmlReading(text))).toBe(true)
        expect(typed(parseNvsmiOutput(text))).toBe(true)
      }),
      { numRuns: 400 },
    )
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.array(fc.nat(400), { maxLength: 8 }), (bytes, offsets) => {
        const buffer = Buffer.from(bytes)
        const chunks = splitAt(
          buffer,
          offsets.filter((offset) => offset < buffer.length),
        )
        expect(typed(parseChunks(chunks))).toBe(true)
        expect(typed(parseNvsmiOutput(buffer))).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it("answers with a typed error when bytes of a valid document are overwritten", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(generatedDocument.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        (edits) => {
          const damaged = Buffer.from(generatedDocument)
          for (const [offset, byte] of edits) {
            damaged[offset] = byte
          }
          const result = parseXmlReading(damaged)
          expect(result._tag === "Success" || nvsmiErrorKinds.includes(result.failure.kind)).toBe(true)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describeWithFixtures("XmlReadingParser properties on the corpus", () => {
  it("fails with a truncation error for every cut of the GT 730 and GB200 documents", () => {
    truncationProperty(readFixture("geforce-gt730-driver384-v9-minimal-pai.xml"), 150)
    truncationProperty(readFixture("gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml"), 100)
  })

  it("fails with a truncation error for cuts of the 206 KB H100 document", () => {
    truncationProperty(readFixture("h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml"), 40)
  })

  it("gives the same result however the H100 and GB200 documents are split into chunks", () => {
    chunkingProperty(readFixture("h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml"), 30)
    chunkingProperty(readFixture("gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml"), 60)
  })
})
