import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** One hostile or oversized nvidia-smi output, as large as the output cap allows. */
export interface WorstInput {
  readonly name: string
  readonly format: "xml" | "csv"
  readonly document: Buffer
}

const gpuFixture = fileURLToPath(
  new URL("../../shared/fixtures/nvidia-smi/h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml", import.meta.url),
)

const open = '<?xml version="1.0" ?>\n<nvidia_smi_log>\n<driver_version>570.86.15</driver_version>\n'
const close = "</nvidia_smi_log>\n"

/** Repeats `unit` as often as it fits between `head` and `tail` within `bytes`. */
const filled = (head: string, unit: string, tail: string, bytes: number): Buffer => {
  const count = Math.floor((bytes - head.length - tail.length) / unit.length)
  return Buffer.from(head + unit.repeat(count) + tail, "utf8")
}

const deepNesting = (bytes: number): Buffer => {
  const levels = Math.floor((bytes - open.length - close.length) / "<a></a>".length)
  return Buffer.from(open + "<a>".repeat(levels) + "</a>".repeat(levels) + close, "utf8")
}

const manyAttributes = (bytes: number): Buffer => {
  const head = `${open}<gpu`
  const tail = `/>${close}`
  const attributes: Array<string> = []
  let size = head.length + tail.length
  for (let attribute = 0; ; attribute++) {
    const text = ` a${attribute.toString(36)}=""`
    if (size + text.length > bytes) break
    attributes.push(text)
    size += text.length
  }
  return Buffer.from(head + attributes.join("") + tail, "utf8")
}

const uuidOf = (gpu: number): string => `GPU-${gpu.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`

/** The first GPU of a real H100 capture, repeated with a distinct UUID each time: a valid, enormous node. */
const manyRealGpus = (bytes: number): Buffer => {
  const capture = readFileSync(gpuFixture, "utf8")
  const start = capture.indexOf("<gpu ")
  const end = capture.indexOf("</gpu>", start) + "</gpu>\n".length
  const block = capture.slice(start, end)
  const uuid = /<uuid>[^<]*<\/uuid>/
  const count = Math.floor((bytes - open.length - close.length) / (block.length + 8))
  const gpus = Array.from({ length: count }, (_, gpu) => block.replace(uuid, `<uuid>${uuidOf(gpu)}</uuid>`))
  return Buffer.from(open + gpus.join("") + close, "utf8")
}

const csvHeader = "index, uuid, serial\n"

/** The worst outputs of `bytes` (the output cap) this bench parses. */
export const worstInputs = (bytes: number): ReadonlyArray<WorstInput> => {
  const room = bytes - 200
  const xml = (name: string, document: Buffer): WorstInput => ({ name, format: "xml", document })
  const csv = (name: string, document: Buffer): WorstInput => ({ name, format: "csv", document })
  return [
    xml("deep nesting", deepNesting(bytes)),
    xml("one huge attribute", filled(`${open}<gpu id="`, "0", `"><uuid>${uuidOf(0)}</uuid></gpu>\n${close}`, room)),
    xml(
      "one huge text node",
      filled(`${open}<gpu><uuid>${uuidOf(0)}</uuid><serial>`, "7", `</serial></gpu>\n${close}`, room),
    ),
    xml("many attributes", manyAttributes(room)),
    xml("many tiny unknown elements", filled(open, "<x/>", close, bytes)),
    // Each construct of the XML tokenizer, filled with its own delimiter characters, which a tokenizer
    // that builds the construct character by character finds hardest.
    xml("one comment of dashes", filled(`${open}<!--`, "-a", `-->${close}`, room)),
    xml(
      "one CDATA section of brackets",
      filled(`${open}<gpu><serial><![CDATA[`, "]a", `]]></serial></gpu>${close}`, room),
    ),
    xml("one processing instruction of question marks", filled(`${open}<?pi `, "?a", `?>${close}`, room)),
    xml(
      "one doctype of brackets and quotes",
      filled(
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY e "',
        "'>",
        `">]>\n<nvidia_smi_log>${close}`,
        room,
      ),
    ),
    xml("one attribute value of quotes", filled(`${open}<gpu id='`, '"', `'/>${close}`, room)),
    xml("many entity references", filled(`${open}<gpu><serial>`, "&amp;", `</serial></gpu>${close}`, room)),
    xml("one long entity reference", filled(`${open}<gpu><serial>&`, "a", `;</serial></gpu>${close}`, room)),
    xml("valid GPUs", manyRealGpus(bytes)),
    csv("CSV: one row of commas", filled(`${csvHeader}0`, ",", "\n", bytes)),
    csv("CSV: one quoted cell", filled(`${csvHeader}0, "`, "x", '", 1\n', bytes)),
    csv("CSV: empty lines", filled(`${csvHeader}0, ${uuidOf(0)}, 1\n`, "\n", "", bytes)),
  ]
}
