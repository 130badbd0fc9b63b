import { createReadStream } from "node:fs"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
/** The process edges a command touches: its streams, environment and working directory. */
export class CliIo extends Context.Service<
  CliIo,
  {
    readonly stdout: (text: string) => Effect.Effect<void>
    readonly stderr: (text: string) => Effect.Effect<void>
    /** Chunks of a file, or of standard input for `-`. */
    readonly input: (path: string) => AsyncIterable<Uint8Array>
    readonly env: Readonly<Record<string, string | undefined>>
    readonly cwd: string
  }
>()("gpu-serials/cli/CliIo") {
  static readonly layer = Layer.sync(CliIo, () =>
    CliIo.of({
      stdout: (text) => write(process.stdout, text),
      stderr: (text) => write(process.stderr, text),
      input: (path) => (path === "-" ? process.stdin : createReadStream(path)),
      env: process.env,
      cwd: process.cwd(),
    }),
  )
}

/** Resolves once the stream has taken the text, so output is not lost when the process exits. */
const write = (stream: NodeJS.WritableStream, text: string): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    stream.write(text, () => resume(Effect.void))
  })
