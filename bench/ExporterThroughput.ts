import { type Duration, Effect } from "effect"
import type { InventoryEvent } from "../src/domain/InventoryEvent.ts"
import type { Exporter } from "../src/pipeline/Exporter.ts"

/** Events handed to the exporter in one call, as the inventory hands a reading round over. */
const pace = 500

/** Waiting records beyond which the bench waits for the exporter, so nothing is dropped for the buffer's sake. */
const backlog = 5_000

export interface Throughput {
  readonly recordsPerSecond: number
  readonly cpuMicrosPerRecord: number
  readonly dropped: number
  readonly records: number
}

/**
 * Hands `rounds` of events to a running exporter, `pace` at a time and never more than `backlog`
 * waiting, flushes, and measures the records written since the call (not those sent before, such as a
 * warm-up) per second and this process's CPU per record.
 */
export const exporterThroughput = (
  exporter: Exporter,
  rounds: ReadonlyArray<ReadonlyArray<InventoryEvent>>,
  flushTimeout: Duration.Input,
): Effect.Effect<Throughput> =>
  Effect.gen(function* () {
    const sentBefore = (yield* exporter.stats).sent
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    for (const events of rounds) {
      for (let at = 0; at < events.length; at += pace) {
        yield* exporter.export(events.slice(at, at + pace))
        while ((yield* exporter.stats).queued > backlog) yield* Effect.sleep("2 millis")
      }
    }
    yield* exporter.flush(flushTimeout)
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const stats = yield* exporter.stats
    const records = stats.sent - sentBefore
    return {
      recordsPerSecond: records / seconds,
      cpuMicrosPerRecord: (cpu.user + cpu.system) / records,
      dropped: stats.dropped,
      records,
    }
  })
