import * as Result from "effect/Result"
import type { NodeReading } from "../domain/NodeReading.ts"
import { type CsvReadingOptions, parseCsvReading } from "./CsvReadingParser.ts"
import { type NvsmiError, OutputTooLarge } from "./NvsmiError.ts"
import { outputFormatOf } from "./OutputFormat.ts"
import { defaultMaxOutputBytes, parseXmlReading, type XmlReadingParserOptions } from "./XmlReadingParser.ts"

export interface NvsmiOutputOptions extends XmlReadingParserOptions, CsvReadingOptions {}

const detectionBytes = 64 * 1024

/**
 * Reads one complete nvidia-smi output whatever it is: `-q -x` XML (possibly after "Unable to determine the
 * device handle" lines), `--query-gpu` CSV with or without a header, or the failure text nvidia-smi printed
 * instead. This is what `gpu-serials parse` runs on a file or stdin.
 */
export const parseNvsmiOutput = (
  output: Uint8Array | string,
  options: NvsmiOutputOptions = {},
): Result.Result<NodeReading, NvsmiError> => {
  const maxBytes = options.maxBytes ?? defaultMaxOutputBytes
  const size = typeof output === "string" ? Buffer.byteLength(output, "utf8") : output.byteLength
  if (size > maxBytes) {
    return Result.fail(new OutputTooLarge({ maxBytes, receivedBytes: size }))
  }
  const head = typeof output === "string" ? output.slice(0, detectionBytes) : decode(output.subarray(0, detectionBytes))
  if (outputFormatOf(head) === "xml") {
    return parseXmlReading(output, { maxBytes })
  }
  const text = typeof output === "string" ? output : decode(output)
  return parseCsvReading(text, options)
}

const decode = (bytes: Uint8Array): string => new TextDecoder("utf-8").decode(bytes)
