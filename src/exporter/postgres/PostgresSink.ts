import * as Effect from "effect/Effect"
import type pg from "pg"
import type { Sink } from "../exporterhelper/Sink.ts"
import { SinkError } from "../exporterhelper/Sink.ts"
import { transaction } from "./PostgresPool.ts"
import { currentChanges, currentColumns, historyColumns, historyParameters, unnestOf } from "./PostgresRows.ts"
import type { PostgresTables } from "./PostgresTables.ts"

/** The statements a batch runs, built once per table. */
const statements = (tables: PostgresTables) => {
  const historyNames = historyColumns.map(([name]) => name).join(", ")
  const currentNames = currentColumns.map(([name]) => name)
  const updated = currentNames.filter((name) => name !== "cluster" && name !== "uuid" && name !== "first_seen")
  return {
    // A retried batch finds its rows there already: nothing is inserted twice.
    history: `INSERT INTO ${tables.history} (${historyNames}) SELECT * FROM ${unnestOf(historyColumns)} ON CONFLICT (id) DO NOTHING`,
    // A row already at a later reading (written by the inventory's store, or a newer batch) is left alone.
    located: `INSERT INTO ${tables.current} AS current (${currentNames.join(", ")}) SELECT * FROM ${unnestOf(currentColumns)}
      ON CONFLICT (cluster, uuid) DO UPDATE SET ${updated.map((name) => `${name} = excluded.${name}`).join(", ")},
        removed_at = NULL, updated_at = now()
      WHERE current.last_seen <= excluded.last_seen`,
    removed: `UPDATE ${tables.current} AS current SET removed_at = gone.time, updated_at = now()
      FROM ${unnestOf([
        ["cluster", "text"],
        ["uuid", "text"],
        ["time", "timestamptz"],
      ])} AS gone (cluster, uuid, time)
      WHERE current.cluster = gone.cluster AND current.uuid = gone.uuid AND current.removed_at IS NULL
        AND current.last_seen <= gone.time`,
  }
}

/**
 * Writes a batch in one transaction: every event into the history (idempotent by record id), and
 * the current state of each GPU of the batch, upserted or marked removed. A broken connection or
 * a timeout rolls the whole batch back, to be written again.
 */
export const make = (options: { readonly pool: pg.Pool; readonly tables: PostgresTables }): Sink => {
  const sql = statements(options.tables)
  return {
    write: (events) => {
      if (events.length === 0) return Effect.void
      const history = historyParameters(events)
      const current = currentChanges(events)
      return transaction(options.pool, async (client) => {
        await client.query(sql.history, history)
        if ((current.located[0]?.length ?? 0) > 0) await client.query(sql.located, current.located)
        if ((current.removed[0]?.length ?? 0) > 0) await client.query(sql.removed, current.removed)
      }).pipe(
        Effect.mapError(
          (failure) =>
            new SinkError({
              message: `postgres ${options.tables.display}: ${failure.message}`,
              retryable: failure.retryable,
            }),
        ),
      )
    },
  }
}
