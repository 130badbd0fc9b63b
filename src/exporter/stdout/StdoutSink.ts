import type { Writable } from "node:stream"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import type * as Scope from "effect/Scope"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type Sink, SinkError } from "../exporterhelper/Sink.ts"
import { recordJson } from "../RecordJson.ts"

const waitForDrain = (stream: Writable): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const onDrain = () => resume(Effect.void)
    stream.once("drain", onDrain)
    return Effect.sync(() => {
      stream.off("drain", onDrain)
    })
  })

/**
 * Writes each batch as one JSON record per line. A batch is written only once the stream has room
 * (it waits for `drain` under the exporter's write deadline), so a timed-out wait can be retried
 * without writing anything twice. A stream that failed or closed (a closed pipe) fails for good.
 */
export const make = Effect.fnUntraced(function* (stream: Writable): Effect.fn.Return<Sink, never, Scope.Scope> {
  const streamFailure = MutableRef.make<string | undefined>(undefined)
  const recordFailure = (error: Error) => {
    MutableRef.set(streamFailure, error.message)
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => stream.on("error", recordFailure)),
    () => Effect.sync(() => stream.off("error", recordFailure)),
  )

  const ensureWritable = Effect.gen(function* () {
    const failure = MutableRef.get(streamFailure)
    if (failure !== undefined || stream.destroyed || !stream.writable) {
      return yield* new SinkError({
        message: failure === undefined ? "output stream is closed" : `output stream failed: ${failure}`,
        retryable: false,
      })
    }
  })

  const write = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void, SinkError> =>
    Effect.gen(function* () {
      yield* ensureWritable
      if (stream.writableNeedDrain) {
        yield* waitForDrain(stream)
        yield* ensureWritable
      }
      let lines = ""
      for (const event of events) lines += `${recordJson(event.record)}\n`
      stream.write(lines)
    })

  return { write }
})
