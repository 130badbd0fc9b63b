import { Effect } from "effect"
import type { InventoryEvent } from "../../../src/domain/InventoryEvent.ts"
import type { Sink, SinkError } from "../../../src/exporter/exporterhelper/Sink.ts"

/** A sink whose every write attempt does what the script says, and which remembers what it got. */
export interface ScriptedSink extends Sink {
  /** Every attempt, failed ones included. */
  readonly attempts: Array<ReadonlyArray<InventoryEvent>>
  /** Events of successful writes, in order. */
  readonly delivered: Array<InventoryEvent>
  readonly closes: { count: number }
}

export const scriptedSink = (
  script: (attempt: number, batch: ReadonlyArray<InventoryEvent>) => Effect.Effect<void, SinkError>,
): ScriptedSink => {
  const attempts: Array<ReadonlyArray<InventoryEvent>> = []
  const delivered: Array<InventoryEvent> = []
  const closes = { count: 0 }
  return {
    attempts,
    delivered,
    closes,
    write: (batch) =>
      Effect.suspend(() => {
        attempts.push(batch)
        return script(attempts.length, batch)
      }).pipe(Effect.tap(() => Effect.sync(() => delivered.push(...batch)))),
    close: Effect.sync(() => {
      closes.count += 1
    }),
  }
}
