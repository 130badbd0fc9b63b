import type { JetStreamClient } from "@nats-io/jetstream"
import type { KV } from "@nats-io/kv"
import { Empty, headers, type NatsConnection } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import type { GpuPlace, HubFleetChange, HubFleetSnapshot } from "../../domain/HubFleetChange.ts"
import type { SourceMarks } from "./SourcePosition.ts"

/** The hub's state bucket could not be read or written. */
export class HubStateError extends Schema.TaggedError<HubStateError>()("HubStateError", {
  bucket: Schema.String,
  operation: Schema.String,
  /** Short and user-facing; never a raw payload. */
  message: Schema.String,
}) {}

const callTimeout = Duration.seconds(10)
/** Keys read at once while loading. */
const loadConcurrency = 256
/** The whole load, every key of a large fleet included. */
const loadTimeout = Duration.minutes(2)

/** KV keys allow `[-/_=.a-zA-Z0-9]`; a UUID's other characters are written `=XX`. */
const keyToken = (uuid: string): string =>
  /^[-_a-zA-Z0-9]*$/.test(uuid)
    ? uuid
    : [...uuid]
        .map((char) =>
          /^[-_a-zA-Z0-9]$/.test(char) ? char : `=${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
        )
        .join("")

const placeKey = (uuid: string) => `place.${keyToken(uuid)}`
const heldKey = (uuid: string) => `held.${keyToken(uuid)}`
/**
 * How far the hub stream has been applied, in one value: the sequence of its last message whose changes
 * were written, and by source the origin sequence applied up to (`{"sequence":N,"sources":{…}}`; a hub
 * of an earlier version wrote the bare sequence).
 */
const appliedKey = "applied"
/** The header that marks a KV bucket's message as a deleted key (nats.js kv's `kvOperationHdr`). */
const kvOperationHeader = "KV-Operation"

/** How far the hub stream has been applied: its own sequence, and each source's origin sequence. */
export interface AppliedPosition {
  readonly sequence: number
  readonly sources: SourceMarks
}

/** What the state bucket held: the fleet and how far the hub stream was applied. */
export interface HubState {
  readonly snapshot: HubFleetSnapshot
  readonly applied: AppliedPosition
}

const nothingApplied: AppliedPosition = { sequence: 0, sources: new Map() }

const isMark = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0

/** Reads the `applied` value; anything unreadable counts as nothing applied. */
const readApplied = (text: string): AppliedPosition => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return nothingApplied
  }
  if (isMark(parsed)) return { sequence: parsed, sources: new Map() }
  if (typeof parsed !== "object" || parsed === null) return nothingApplied
  const { sequence, sources } = parsed as { readonly sequence?: unknown; readonly sources?: unknown }
  const marks = new Map<string, number>()
  if (typeof sources === "object" && sources !== null) {
    for (const [source, mark] of Object.entries(sources)) if (isMark(mark)) marks.set(source, mark)
  }
  return { sequence: isMark(sequence) ? sequence : 0, sources: marks }
}

const appliedText = (applied: AppliedPosition): string =>
  JSON.stringify({ sequence: applied.sequence, sources: Object.fromEntries(applied.sources) })

const call = <A>(
  bucket: string,
  operation: string,
  run: () => Promise<A>,
  timeout: Duration.Duration = callTimeout,
): Effect.Effect<A, HubStateError> =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      new HubStateError({ bucket, operation, message: cause instanceof Error ? cause.message : String(cause) }),
  }).pipe(
    Effect.timeout(timeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(new HubStateError({ bucket, operation, message: `no answer within ${Duration.format(timeout)}` })),
    ),
  )

/** Reads every key of the bucket: the GPUs' places, the held removals and how far the stream was applied. */
export const loadHubState = (kv: KV, bucket: string): Effect.Effect<HubState, HubStateError> =>
  call(
    bucket,
    "load",
    async () => {
      const places = new Map<string, GpuPlace>()
      const held = new Map<string, GpuRecord>()
      let applied = nothingApplied
      const keys: Array<string> = []
      for await (const key of await kv.keys()) keys.push(key)
      // Read side by side, a bounded number at a time: a fleet of 100,000 GPUs is as many keys.
      const entries = []
      for (let start = 0; start < keys.length; start += loadConcurrency) {
        const chunk = keys.slice(start, start + loadConcurrency)
        const read = await Promise.all(chunk.map((key) => kv.get(key)))
        entries.push(...chunk.map((key, index) => [key, read[index]] as const))
      }
      for (const [key, entry] of entries) {
        if (entry === null || entry === undefined || entry.operation !== "PUT") continue
        if (key === appliedKey) {
          applied = readApplied(entry.string())
        } else if (key.startsWith("place.")) {
          const place = entry.json<GpuPlace & { readonly uuid: string }>()
          places.set(place.uuid, { cluster: place.cluster, node: place.node, machine: place.machine })
        } else if (key.startsWith("held.")) {
          const removal = entry.json<GpuRecord>()
          held.set(removal.uuid, removal)
        }
      }
      return { snapshot: { places, held }, applied }
    },
    loadTimeout,
  )

/** The value of each key a batch's changes touch, the last change of a key winning; undefined deletes it. */
const latestValues = (changes: ReadonlyArray<HubFleetChange>): Map<string, string | undefined> => {
  const latest = new Map<string, string | undefined>()
  for (const change of changes) {
    switch (change._tag) {
      case "Place":
        latest.set(placeKey(change.uuid), JSON.stringify({ uuid: change.uuid, ...change.place }))
        break
      case "Forget":
        latest.set(placeKey(change.uuid), undefined)
        break
      case "Hold":
        latest.set(heldKey(change.uuid), JSON.stringify(change.removal))
        break
      case "Release":
        latest.set(heldKey(change.uuid), undefined)
        break
    }
  }
  return latest
}

/** Writes a batch's changes to the state bucket, then how far the hub stream was applied with them. */
export interface HubStateWriter {
  readonly write: (
    changes: ReadonlyArray<HubFleetChange>,
    applied: AppliedPosition,
  ) => Effect.Effect<void, HubStateError>
}

/**
 * The hub's writer of its state bucket `kv` (named `bucket`, a plain bucket of the hub's JetStream, each
 * key the subject `$KV.<bucket>.<key>`). A batch's keys are written the last change of each key winning,
 * then how far they were applied (the hub stream sequence and the sources' marks, in one value): the
 * batch is durable before that value is, and writing it again is harmless.
 *
 * Catching up, a batch touches hundreds of keys, and a JetStream publish that waits for its answer costs
 * the client a request each (a reply subscription, a timer, an error object). So once the bucket's last
 * sequence is known, every key but the last is published without an answer and the last with one: the
 * bucket's stream numbers the messages it stores one after the other, in the order one connection sent
 * them, so the last key's sequence being the sequence before plus the number of keys confirms every key
 * stored. Any other sequence (a message lost on a reconnect, another writer of the bucket) and the first
 * batch write every key with an answer each, before `applied` is written.
 */
export const hubStateWriter = (
  connection: NatsConnection,
  js: JetStreamClient,
  kv: KV,
  bucket: string,
): HubStateWriter => {
  /** The bucket's sequence after this writer's last write, when it is known. */
  let lastSequence: number | undefined
  /** Writes begun, the latest one's number. */
  let writes = 0
  const subjectOf = (key: string) => `$KV.${bucket}.${key}`
  const deletion = () => {
    const marker = headers()
    marker.set(kvOperationHeader, "DEL")
    return marker
  }
  const publishAnswered = (key: string, value: string | undefined) =>
    js
      .publish(subjectOf(key), value ?? Empty, value === undefined ? { headers: deletion() } : {})
      .then((ack) => ack.seq)

  /** Every key but the last unanswered, the last answered: whether the bucket's sequence confirms them all. */
  const writeConfirmed = async (entries: ReadonlyArray<readonly [string, string | undefined]>, before: number) => {
    const last = entries.length - 1
    for (let at = 0; at < last; at++) {
      const [key, value] = entries[at] as readonly [string, string | undefined]
      if (value === undefined) connection.publish(subjectOf(key), Empty, { headers: deletion() })
      else connection.publish(subjectOf(key), value)
    }
    const [key, value] = entries[last] as readonly [string, string | undefined]
    return (await publishAnswered(key, value)) === before + entries.length
  }

  const write = (changes: ReadonlyArray<HubFleetChange>, applied: AppliedPosition) =>
    call(bucket, "write", async () => {
      const entries = [...latestValues(changes)]
      const before = lastSequence
      lastSequence = undefined
      // A write that timed out and finishes late must not set the sequence after a newer write.
      const write = ++writes
      const confirmed = entries.length === 0 || (before !== undefined && (await writeConfirmed(entries, before)))
      if (!confirmed) await Promise.all(entries.map(([key, value]) => publishAnswered(key, value)))
      const sequence = await kv.put(appliedKey, appliedText(applied))
      if (write === writes) lastSequence = sequence
    })
  return { write }
}
