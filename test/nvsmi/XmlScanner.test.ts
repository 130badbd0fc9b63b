import { readdirSync } from "node:fs"
import * as Result from "effect/Result"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { worstInputs } from "../../bench/WorstInputs.ts"
import type { NodeReading } from "../../src/domain/NodeReading.ts"
import type { NvsmiError } from "../../src/nvsmi/NvsmiError.ts"
import { defaultMaxOutputBytes, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import { describeWithFixtures, fixtureDirectory, fixturesPresent, readFixture } from "../support/fixtures.ts"
import { SaxesReadingParser } from "./SaxesReadingParser.ts"

type Outcome = Result.Result<NodeReading, NvsmiError>

const parseInChunks = (
  parser: XmlReadingParser | SaxesReadingParser,
  output: Uint8Array | string,
  chunkLength: number,
): Outcome => {
  for (let offset = 0; offset < output.length; offset += chunkLength) {
    parser.write(output.slice(offset, offset + chunkLength))
  }
  return parser.end()
}

const kindOf = (outcome: Outcome): string => (Result.isSuccess(outcome) ? "reading" : outcome.failure.kind)

/**
 * The scanner's outcome against the saxes reader's for the same output fed in the same chunks: the same
 * reading, value for value, or the same kind of error (the wording of a well-formedness error is its own).
 */
const expectSameOutcome = (output: Uint8Array | string, label: string, chunkLength = output.length || 1): void => {
  const scanned = parseInChunks(new XmlReadingParser(), output, chunkLength)
  const reference = parseInChunks(new SaxesReadingParser(), output, chunkLength)
  expect(kindOf(scanned), label).toBe(kindOf(reference))
  if (Result.isSuccess(reference)) expect(scanned, label).toStrictEqual(reference)
}

const uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444"

const documentOf = (gpu: string, prolog = '<?xml version="1.0" ?>\n'): string =>
  `${prolog}<nvidia_smi_log>\n\t<driver_version>570.86.15</driver_version>\n\t${gpu}\n</nvidia_smi_log>\n`

const gpuOf = (inside: string, attributes = ' id="00000000:18:00.0"'): string =>
  `<gpu${attributes}>\n\t\t<product_name>NVIDIA H100</product_name>\n\t\t<serial>1654922031993</serial>\n\t\t<uuid>${uuid}</uuid>${inside}\n\t</gpu>`

const valid = documentOf(gpuOf(""))

/** Outputs that are well-formed or not, each naming the construct it tries. */
const variants: ReadonlyArray<readonly [string, string]> = [
  ["the plain document", valid],
  ["no XML declaration", documentOf(gpuOf(""), "")],
  [
    "a doctype",
    documentOf(gpuOf(""), '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n'),
  ],
  ["a doctype with a subset", documentOf(gpuOf(""), "<!DOCTYPE nvidia_smi_log [<!ENTITY e 'x'><!-- c --><?p x?>]>\n")],
  ["a doctype's malformed comment", documentOf(gpuOf(""), "<!DOCTYPE nvidia_smi_log [<!-- a -- b -->]>\n")],
  ["two doctypes", documentOf(gpuOf(""), "<!DOCTYPE a>\n<!DOCTYPE a>\n")],
  ["a doctype inside the root", valid.replace("<driver_version>", "<!DOCTYPE a><driver_version>")],
  ["encoding and standalone", documentOf(gpuOf(""), '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>')],
  ["XML 1.1", documentOf(gpuOf(""), "<?xml version='1.1'?>")],
  ["XML 1.1 with a C1 control", documentOf(gpuOf("<x>\u0081</x>"), "<?xml version='1.1'?>")],
  [
    "XML 1.1 with NEL in a value",
    documentOf(gpuOf("<vbios_version>96.\u008500</vbios_version>"), "<?xml version='1.1'?>"),
  ],
  ["XML 1.0 with a C1 control", documentOf(gpuOf("<x>\u0081</x>"))],
  ["a version without its value", documentOf(gpuOf(""), "<?xml version?>")],
  ["no version", documentOf(gpuOf(""), '<?xml encoding="UTF-8"?>')],
  ["a bad version", documentOf(gpuOf(""), '<?xml version="2.0"?>')],
  ["a bad encoding", documentOf(gpuOf(""), '<?xml version="1.0" encoding="8bit"?>')],
  ["a bad standalone", documentOf(gpuOf(""), '<?xml version="1.0" standalone="maybe"?>')],
  ["no space between pairs", documentOf(gpuOf(""), '<?xml version="1.0"encoding="UTF-8"?>')],
  ["an unquoted version", documentOf(gpuOf(""), "<?xml version=1.0?>")],
  ["a question mark in a value", documentOf(gpuOf(""), '<?xml version="1?0"?>')],
  ["a declaration after a comment", documentOf(gpuOf(""), '<!-- c --><?xml version="1.0"?>')],
  ["a second declaration", valid.replace("<nvidia_smi_log>", '<?xml version="1.0"?><nvidia_smi_log>')],
  ["a processing instruction", valid.replace("<driver_version>", "<?target some data?><driver_version>")],
  ["a processing instruction named XML", valid.replace("<driver_version>", "<?XML x?><driver_version>")],
  ["a processing instruction without a target", valid.replace("<driver_version>", "<? x?><driver_version>")],
  [
    "comments",
    valid.replace("<uuid>", "<!-- a - b --><uuid>").replace("</nvidia_smi_log>", "</nvidia_smi_log><!---->"),
  ],
  ["a comment with two hyphens", valid.replace("<uuid>", "<!-- a -- b --><uuid>")],
  ["a comment ending in three hyphens", valid.replace("<uuid>", "<!-- a ---><uuid>")],
  ["a comment inside a kept value", valid.replace("1654922031993", "16549<!-- x -->22031993")],
  ["CDATA in a kept value", valid.replace("1654922031993", "16549<![CDATA[22]]]>031993")],
  ["CDATA outside the root", `${valid}<![CDATA[x]]>`],
  ["CDATA before the root", valid.replace("<nvidia_smi_log>", "<![CDATA[x]]><nvidia_smi_log>")],
  ["an unknown bang", valid.replace("<uuid>", "<!ELEMENT x><uuid>")],
  ["entities in a value", valid.replace("NVIDIA H100", "NVIDIA &amp; &lt;H100&gt; &quot;&apos; &#65;&#x42;&#x1F600;")],
  ["an undefined entity", valid.replace("NVIDIA H100", "NVIDIA&nbsp;H100")],
  ["an empty entity", valid.replace("NVIDIA H100", "NVIDIA&;H100")],
  ["an entity with a disallowed character", valid.replace("NVIDIA H100", "NVIDIA&a b;H100")],
  ["a bare ampersand", valid.replace("NVIDIA H100", "NVIDIA & H100")],
  ["a reference to NUL", valid.replace("NVIDIA H100", "NVIDIA&#0;H100")],
  ["a reference past Unicode", valid.replace("NVIDIA H100", "NVIDIA&#x110000;H100")],
  ["a reference with an upper-case X", valid.replace("NVIDIA H100", "NVIDIA&#X41;H100")],
  ["entities in an unkept element", valid.replace("<uuid>", "<x>&amp;&#10;</x><uuid>")],
  ["a bad entity in an unkept element", valid.replace("<uuid>", "<x>&bogus;</x><uuid>")],
  ["]]> in text", valid.replace("<uuid>", "<x>a]]>b</x><uuid>")],
  ["]] > in text", valid.replace("<uuid>", "<x>a]] >b]]</x><uuid>")],
  ["a NUL character", valid.replace("NVIDIA H100", "NVIDIA\u0000H100")],
  ["a form feed in an unkept element", valid.replace("<uuid>", "<x>\f</x><uuid>")],
  ["a lone low surrogate", valid.replace("NVIDIA H100", "NVIDIA\udc00H100")],
  ["a lone high surrogate", valid.replace("NVIDIA H100", "NVIDIA\ud800H100")],
  ["U+FFFE", valid.replace("NVIDIA H100", "NVIDIA\ufffeH100")],
  ["a pair in a value", valid.replace("NVIDIA H100", "NVIDIA 😀 H100")],
  ["CRLF line ends", valid.replaceAll("\n", "\r\n")],
  ["CR line ends", valid.replaceAll("\n", "\r")],
  ["CRLF in a kept value", valid.replace("NVIDIA H100", "NVIDIA\r\nH100\r")],
  ["a tab and a line end in the id", documentOf(gpuOf("", ' id="00000000:18\t:00\r\n.0"'))],
  ["entities in the id", documentOf(gpuOf("", ' id="00000000&#58;18:00.0&amp;"'))],
  ["single quotes around the id", documentOf(gpuOf("", " id='00000000:18:00.0'"))],
  ["spaces around the equals sign", documentOf(gpuOf("", ' id = "00000000:18:00.0" '))],
  ["two attributes", documentOf(gpuOf("", ' a="1" id="00000000:18:00.0"'))],
  ["a duplicate attribute", documentOf(gpuOf("", ' id="1" id="2"'))],
  ["an unquoted attribute", documentOf(gpuOf("", " id=1"))],
  ["an attribute without a value", documentOf(gpuOf("", " id"))],
  ["an attribute without a value before >", documentOf(gpuOf("", ' id="1" checked'))],
  ["no space between attributes", documentOf(gpuOf("", ' a="1"id="2"'))],
  ["< in an attribute", documentOf(gpuOf("", ' id="a<b"'))],
  ["> in an attribute", documentOf(gpuOf("", ' id="a>b"'))],
  ["a slash not closing the tag", documentOf(gpuOf("", ' id="1" /x'))],
  ["self-closing elements", valid.replace("<uuid>", "<processes/><x a='1' /><uuid>")],
  ["a self-closing root", "<nvidia_smi_log/>"],
  ["a tag name with a dot and digits", valid.replace("<uuid>", "<a.b-1:c>x</a.b-1:c><uuid>")],
  ["a tag name starting with a digit", valid.replace("<uuid>", "<1a>x</1a><uuid>")],
  ["a close tag starting with a digit", valid.replace("<uuid>", "<a>x</1a><uuid>")],
  ["a non-ASCII tag name", valid.replace("<uuid>", "<été>x</été><uuid>")],
  ["a tag name with a disallowed character", valid.replace("<uuid>", "<a\u0001>x</a><uuid>")],
  ["a space in a close tag", valid.replace("</uuid>", "</uuid >")],
  ["an empty close tag", valid.replace("</uuid>", "</>")],
  ["a mismatched close tag", valid.replace("</serial>", "</serials>")],
  ["a close tag that is a prefix", valid.replace("</serial>", "</seria>")],
  ["a stray close tag", valid.replace("</serial>", "</serial></oops>")],
  ["a close tag after the root", `${valid}</nvidia_smi_log>`],
  ["a second root", `${valid}<nvidia_smi_log/>`],
  ["text after the root", `${valid}trailing text`],
  ["text before the root", valid.replace("<nvidia_smi_log>", "text<nvidia_smi_log>")],
  ["an ampersand after the root", `${valid}&amp;`],
  ["a comment after the root", `${valid}<!-- done -->\n`],
  ["an unfinished comment after the root", `${valid}<!-- done`],
  ["an unfinished tag after the root", `${valid}<x`],
  ["< then a space", valid.replace("<uuid>", "< uuid><uuid>")],
  ["another root", '<?xml version="1.0"?><html><body>502</body></html>'],
  ["another root, cut", '<?xml version="1.0"?><html><body>502'],
  ["another root with a duplicate attribute", '<html a="1" a="2"><body>502</body></html>'],
  ["a value nested in an unkept element", valid.replace("<uuid>", "<a><serial>x</serial></a><uuid>")],
  ["markup inside a kept value", valid.replace("1654922031993", "1654<b>92203</b>1993")],
  ["a value of the longest allowed length", valid.replace("1654922031993", "7".repeat(1024))],
  ["a value one longer", valid.replace("1654922031993", "7".repeat(1025))],
  ["a CDATA value one longer", valid.replace("1654922031993", `<![CDATA[${"7".repeat(1025)}]]>`)],
  ["a long unkept text", valid.replace("<uuid>", `<x>${"y".repeat(100_000)}</x><uuid>`)],
  ["a BOM and blank lines first", `\ufeff\n\n${valid}`],
  [
    "a device-handle line first",
    `Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n${valid}`,
  ],
  ["an unexpected line first", `Something else\n${valid}`],
  ["a carriage return last, after <", "<\r"],
  ["a declaration's name starting with an equals sign", "<?xml\r='"],
  ["nothing", ""],
  ["blank", " \r\n\t"],
]

describe("XmlScanner against saxes", () => {
  it("gives the saxes reader's reading, or its kind of error, for each construct whole and cut anywhere", () => {
    for (const [name, output] of variants) {
      expectSameOutcome(output, name)
      expectSameOutcome(output, `${name} in 7-character chunks`, 7)
      expectSameOutcome(Buffer.from(output, "utf8"), `${name} as bytes in 5-byte chunks`, 5)
      for (let cut = 1; cut < output.length; cut += Math.max(1, Math.floor(output.length / 60))) {
        expectSameOutcome(output.slice(0, cut), `${name} cut at ${cut}`)
      }
    }
  })

  it("gives the same kind of outcome for text made of XML's pieces", () => {
    const pieces = fc.constantFrom(
      "<",
      ">",
      "/",
      "</",
      "/>",
      "nvidia_smi_log",
      "gpu",
      "uuid",
      "serial",
      " id=",
      '"',
      "'",
      "=",
      "&amp;",
      "&",
      ";",
      "#",
      "<!--",
      "-->",
      "-",
      "<![CDATA[",
      "]]>",
      "]",
      "<?xml",
      '<?xml version="1.0"?>',
      "?>",
      "<!DOCTYPE",
      "[",
      "N/A",
      "\n",
      "\r",
      " ",
      "é",
      "\u0000",
    )
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), fc.integer({ min: 1, max: 16 }), (parts, chunkLength) => {
        const output = parts.join("")
        expectSameOutcome(output, JSON.stringify(output))
        expectSameOutcome(output, `${JSON.stringify(output)} in chunks of ${chunkLength}`, chunkLength)
      }),
      { numRuns: 1500 },
    )
  })
})

describeWithFixtures("XmlScanner against saxes on the captures", () => {
  const captures = fixturesPresent ? readdirSync(fixtureDirectory).filter((name) => !name.endsWith(".md")) : []
  const xmlCaptures = captures.filter((name) => name.endsWith(".xml"))

  it("reads every capture exactly as the saxes reader did, whole and in chunks", () => {
    expect(xmlCaptures.length).toBeGreaterThanOrEqual(12)
    for (const name of captures) {
      const output = readFixture(name)
      expectSameOutcome(output, name)
      for (const chunkLength of [1, 13, 1024, 16 * 1024]) {
        expectSameOutcome(output, `${name} in ${chunkLength}-byte chunks`, chunkLength)
      }
    }
  })

  it("gives the same outcome for every capture cut at random offsets", () => {
    for (const name of xmlCaptures) {
      const output = readFixture(name)
      fc.assert(
        fc.property(fc.integer({ min: 0, max: output.length }), (cut) => {
          expectSameOutcome(output.subarray(0, cut), `${name} cut at ${cut}`)
        }),
        { numRuns: 40 },
      )
    }
  })

  it("gives the same outcome when bytes inside the tags of a capture are overwritten", () => {
    for (const name of xmlCaptures) {
      const output = readFixture(name)
      const inTags: Array<number> = []
      let open = -1
      for (let at = 0; at < output.length; at++) {
        if (output[at] === 0x3c) open = at
        else if (output[at] === 0x3e && open >= 0) {
          for (let inside = open; inside <= at; inside++) inTags.push(inside)
          open = -1
        }
      }
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat(inTags.length - 1), fc.integer({ min: 0, max: 255 })), {
            minLength: 1,
            maxLength: 3,
          }),
          (edits) => {
            const damaged = Buffer.from(output)
            for (const [at, byte] of edits) damaged[inTags[at] ?? 0] = byte
            expectSameOutcome(damaged, `${name} with ${JSON.stringify(edits)}`)
          },
        ),
        { numRuns: 40 },
      )
    }
  })

  it("refuses each worst input up to the output cap as saxes does", () => {
    for (const input of worstInputs(defaultMaxOutputBytes)) {
      if (input.format === "xml") expectSameOutcome(input.document, input.name, 16 * 1024)
    }
  })
})
