import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import { parseXmlReading, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import { errorFrom, readingFrom } from "./ReadingAssertions.ts"

const uuidA = "GPU-aaaaaaaa-1111-2222-3333-444444444444"
const uuidB = "GPU-bbbbbbbb-1111-2222-3333-444444444444"
const uuidC = "GPU-cccccccc-1111-2222-3333-444444444444"

const gpuElement = (uuid: string, extra = "", bus = "00000000:01:00.0"): string =>
  `<gpu id="${bus}"><product_name>NVIDIA H100</product_name><serial>1650000000001</serial><uuid>${uuid}</uuid>${extra}<pci><pci_bus_id>${bus}</pci_bus_id></pci></gpu>`

const documentOf = (gpus: string, root = "<driver_version>570.1</driver_version><cuda_version>12.8</cuda_version>") =>
  `<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log>${root}${gpus}</nvidia_smi_log>\n`

describe("XmlReadingParser", () => {
  it("decodes entities and keeps only the elements it needs", () => {
    const text = documentOf(
      `<gpu id="00000000:01:00.0"><product_name>A &amp; B &#x2713; &lt;x&gt;</product_name><uuid>${uuidA}</uuid>` +
        `<processes><process_info><uuid>${uuidB}</uuid><serial>999</serial></process_info></processes>` +
        `<mig_devices>None</mig_devices><mig_mode><current_mig>Enabled</current_mig><pending_mig>Disabled</pending_mig></mig_mode></gpu>`,
    )
    expect(readingFrom(parseXmlReading(text)).gpus).toStrictEqual([
      { index: 0, uuid: uuidA, product: "A & B ✓ <x>", pciBusId: "00000000:01:00.0", migMode: "Enabled" },
    ])
  })

  it("accepts XML comments, CRLF line ends, self-closing and empty elements, and no DOCTYPE", () => {
    const text = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      "<nvidia_smi_log>",
      "\t<!-- driver_version is deprecated, use kmd_version -->",
      "\t<driver_version>615.23</driver_version>",
      "\t<kmd_version><!-- kernel mode driver -->615.23.01</kmd_version>",
      "\t<cuda_umd_version>13.3</cuda_umd_version>",
      '\t<gpu id="00000000:05:00.0">',
      "\t\t<serial/>",
      "\t\t<product_name>   </product_name>",
      `\t\t<uuid>\r\n\t\t\t${uuidA}\r\n\t\t</uuid>`,
      "\t\t<processes />",
      "\t</gpu>",
      "</nvidia_smi_log>",
    ].join("\r\n")
    expect(readingFrom(parseXmlReading(text))).toStrictEqual({
      gpus: [{ index: 0, uuid: uuidA, pciBusId: "00000000:05:00.0" }],
      failures: [],
      format: "xml",
      driverVersion: "615.23.01",
      cudaVersion: "13.3",
    })
  })

  it("prefers cuda_version over cuda_umd_version and platformInfo/module_id over gpu_module_id", () => {
    const text = documentOf(
      gpuElement(uuidA, "<gpu_module_id>3</gpu_module_id><platformInfo><module_id>5</module_id></platformInfo>") +
        gpuElement(uuidB, "<gpu_module_id>6</gpu_module_id><platformInfo><module_id>N/A</module_id></platformInfo>") +
        gpuElement(uuidC, "<gpu_module_id>-1</gpu_module_id>"),
      "<cuda_version>13.0</cuda_version><cuda_umd_version>13.3</cuda_umd_version>",
    )
    const parsed = readingFrom(parseXmlReading(text))
    expect(parsed.cudaVersion).toBe("13.0")
    expect(parsed.gpus.map((gpu) => gpu.moduleId)).toStrictEqual([5, 6, undefined])
  })

  it("keeps platform fields only when one of them is present", () => {
    const na = "<chassis_serial_number>N/A</chassis_serial_number><slot_number>N/A</slot_number>"
    const text = documentOf(
      gpuElement(uuidA, `<platformInfo>${na}<peer_type>Direct Connected</peer_type></platformInfo>`) +
        gpuElement(uuidB, `<platformInfo>${na}<chassis_serial_number></chassis_serial_number></platformInfo>`),
    )
    const [first, second] = readingFrom(parseXmlReading(text)).gpus
    expect(first?.platform).toStrictEqual({ peerType: "Direct Connected" })
    expect(second !== undefined && "platform" in second).toBe(false)
  })

  it("turns a GPU without a usable UUID into an unidentified failure and keeps the others", () => {
    const text = documentOf(
      gpuElement(uuidA, "", "00000000:01:00.0") +
        gpuElement("N/A", "", "00000000:02:00.0") +
        gpuElement("not-a-uuid", "", "00000000:03:00.0") +
        gpuElement(uuidB, "", "00000000:04:00.0"),
    )
    const parsed = readingFrom(parseXmlReading(text))
    expect(parsed.gpus.map((gpu) => [gpu.index, gpu.uuid])).toStrictEqual([
      [0, uuidA],
      [3, uuidB],
    ])
    expect(parsed.failures).toStrictEqual([
      { kind: "unidentified", index: 1, pciBusId: "00000000:02:00.0", reason: "no UUID reported" },
      {
        kind: "unidentified",
        index: 2,
        pciBusId: "00000000:03:00.0",
        reason: "UUID is not of the form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
      },
    ])
  })

  it("keeps the first of two GPUs with one UUID and reports the other as a duplicate-uuid failure", () => {
    const text = documentOf(
      gpuElement(uuidA, "", "00000000:01:00.0") +
        gpuElement(uuidB, "", "00000000:02:00.0") +
        gpuElement(uuidA, "", "00000000:03:00.0"),
    )
    const parsed = readingFrom(parseXmlReading(text))
    expect(parsed.gpus.map((gpu) => [gpu.index, gpu.uuid])).toStrictEqual([
      [0, uuidA],
      [1, uuidB],
    ])
    expect(parsed.failures).toStrictEqual([
      {
        kind: "duplicate-uuid",
        index: 2,
        pciBusId: "00000000:03:00.0",
        reason: `UUID ${uuidA} is also reported by GPU 0`,
      },
    ])
  })

  it("reports GPUs that require a reset or are lost as failures, and fails when none is readable", () => {
    const mixed = documentOf(
      gpuElement(uuidA) +
        gpuElement("[GPU requires reset]", "", "00000000:02:00.0") +
        gpuElement(uuidC, "<mig_mode><current_mig>GPU is lost</current_mig></mig_mode>", "00000000:03:00.0"),
    )
    expect(readingFrom(parseXmlReading(mixed)).failures).toStrictEqual([
      { kind: "requires-reset", index: 1, pciBusId: "00000000:02:00.0", reason: "GPU requires reset" },
      { kind: "lost", index: 2, pciBusId: "00000000:03:00.0", reason: "GPU is lost" },
    ])
    const allReset = documentOf(gpuElement("[GPU requires reset]") + gpuElement("GPU requires reset"))
    const error = errorFrom(parseXmlReading(allReset))
    expect(error.kind).toBe("gpu-requires-reset")
    expect(error._tag === "GpuRequiresReset" && error.gpuCount).toBe(2)
  })

  it("records device-handle lines before the document and numbers the surviving GPUs around them", () => {
    const text =
      "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n" +
      documentOf(gpuElement(uuidA) + gpuElement(uuidB) + gpuElement(uuidC))
    const parsed = readingFrom(parseXmlReading(text))
    expect(parsed.gpus.map((gpu) => gpu.index)).toStrictEqual([0, 2, 3])
    expect(parsed.failures).toStrictEqual([
      { kind: "device-handle", index: 1, pciBusId: "0000:34:00.0", reason: "Unknown Error" },
    ])
  })

  it("accepts the older device-handle line, which has no index, and GPU-is-lost lines", () => {
    const text =
      "Unable to determine the device handle for GPU 0000:34:00.0: Unknown Error\r\n" +
      "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU\r\n" +
      "WARNING: infoROM is corrupted at gpu 0000:04:00.0\r\n" +
      documentOf(gpuElement(uuidA) + gpuElement(uuidB))
    const parsed = readingFrom(parseXmlReading(text))
    expect(parsed.gpus.map((gpu) => gpu.index)).toStrictEqual([0, 1])
    expect(parsed.failures).toStrictEqual([
      { kind: "device-handle", pciBusId: "0000:34:00.0", reason: "Unknown Error" },
      { kind: "lost", pciBusId: "0000:3B:00.0", reason: "GPU is lost. Reboot the system to recover this GPU" },
    ])
  })

  it("fails with the device-handle error when no GPU survives", () => {
    const text = `Unable to determine the device handle for GPU0: 0000:34:00.0: Unknown Error\n${documentOf("")}`
    const error = errorFrom(parseXmlReading(text))
    expect(error.kind).toBe("device-handle")
    expect(error.message).toContain("GPU 0 (0000:34:00.0): Unknown Error")
  })

  it("fails with no-devices for a document without GPUs", () => {
    expect(errorFrom(parseXmlReading(documentOf(""))).kind).toBe("no-devices")
  })

  it("fails on truncation, malformed XML, another root element, and text before the document", () => {
    const complete = documentOf(gpuElement(uuidA))
    expect(errorFrom(parseXmlReading(complete.slice(0, complete.indexOf("</uuid>")))).kind).toBe("truncated")
    expect(errorFrom(parseXmlReading(complete.replace("</serial>", "</serial></oops>"))).kind).toBe("malformed")
    expect(errorFrom(parseXmlReading(`${complete}<nvidia_smi_log/>`)).kind).toBe("malformed")
    expect(errorFrom(parseXmlReading(`${complete}trailing text`)).kind).toBe("malformed")
    expect(errorFrom(parseXmlReading(complete.replace("&", "&nbsp;").replace("NVIDIA", "&nbsp;"))).kind).toBe(
      "malformed",
    )
    expect(errorFrom(parseXmlReading('<?xml version="1.0"?><html><body>502</body></html>')).kind).toBe("not-nvidia-smi")
    expect(errorFrom(parseXmlReading(`Something else entirely\n${complete}`)).kind).toBe("malformed")
  })

  it("classifies output that holds no document at all", () => {
    expect(errorFrom(parseXmlReading("")).kind).toBe("empty")
    expect(errorFrom(parseXmlReading(" \r\n\t\n")).kind).toBe("empty")
    expect(errorFrom(parseXmlReading("No devices were found\n")).kind).toBe("no-devices")
    expect(errorFrom(parseXmlReading("==============NVSMI LOG==============\n")).kind).toBe("not-nvidia-smi")
  })

  it("fails with output-too-large once the byte cap is passed and ignores what comes after", () => {
    const complete = Buffer.from(documentOf(gpuElement(uuidA)))
    const parser = new XmlReadingParser({ maxBytes: 100 })
    parser.write(complete.subarray(0, 60))
    parser.write(complete.subarray(60, 120))
    parser.write(complete.subarray(120))
    const error = errorFrom(parser.end())
    expect(error.kind).toBe("output-too-large")
    expect(error._tag === "OutputTooLarge" && [error.maxBytes, error.receivedBytes]).toStrictEqual([100, 120])
    expect(readingFrom(parseXmlReading(complete, { maxBytes: complete.length })).gpus).toHaveLength(1)
  })

  it("returns the same outcome when end() is called again and ignores writes after it", () => {
    const parser = new XmlReadingParser()
    parser.write(documentOf(gpuElement(uuidA)))
    const first = parser.end()
    parser.write("garbage")
    expect(parser.end()).toBe(first)
  })

  it("reads a multi-byte character split across byte chunks", () => {
    const bytes = Buffer.from(documentOf(gpuElement(uuidA).replace("NVIDIA H100", "Tésla ✓ 😀")))
    const split = bytes.indexOf(Buffer.from("😀")) + 2
    const parser = new XmlReadingParser()
    parser.write(bytes.subarray(0, split))
    parser.write(bytes.subarray(split))
    expect(readingFrom(parser.end()).gpus[0]?.product).toBe("Tésla ✓ 😀")
  })

  it("keeps no part of the decoded output while the reading is still open, only the values it read", () => {
    setFlagsFromString("--expose-gc")
    const collectGarbage = runInNewContext("gc") as () => void
    // Eight GPUs, each with 24 KB of elements the reading skips: every decoded slice holds a GPU's values.
    const filler = `<processes>${"<process_info><pid>1234</pid><used_memory>100 MiB</used_memory></process_info>".repeat(300)}</processes>`
    const gpus = Array.from({ length: 8 }, (_, index) =>
      gpuElement(`GPU-${String(index).repeat(8)}-1111-2222-3333-444444444444`, filler, `00000000:0${index}:00.0`),
    )
    const output = Buffer.from(documentOf(gpus.join("")))
    const parsers: Array<XmlReadingParser> = []
    collectGarbage()
    const before = process.memoryUsage().heapUsed
    for (let run = 0; run < 20; run++) {
      const parser = new XmlReadingParser()
      for (let offset = 0; offset < output.length; offset += 16 * 1024) {
        parser.write(output.subarray(offset, offset + 16 * 1024))
      }
      parsers.push(parser)
    }
    collectGarbage()
    const keptPerParser = (process.memoryUsage().heapUsed - before) / parsers.length
    expect(keptPerParser).toBeLessThan(output.length / 8)
    expect(parsers.map((parser) => readingFrom(parser.end()).gpus.length)).toStrictEqual(new Array(20).fill(8))
  })
})
