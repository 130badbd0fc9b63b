import { Layer, Logger, References } from "effect"
import * as JsonLogger from "../../src/log/JsonLogger.ts"

/** The service's JSON logger writing into memory, at debug level. */
export const capturedLog = () => {
  const lines: Array<string> = []
  const layer = Layer.mergeAll(
    Logger.layer([JsonLogger.make({ write: (line) => lines.push(line) }, "debug")]),
    Layer.succeed(References.MinimumLogLevel, "Debug"),
  )
  const events = (): Array<Record<string, unknown>> => lines.map((line) => JSON.parse(line))
  return { lines, events, layer }
}
