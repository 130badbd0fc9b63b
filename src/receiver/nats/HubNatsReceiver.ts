import {
  AckPolicy,
  type Consumer,
  DeliverPolicy,
  type JetStreamManager,
  type JsMsg,
  jetstreamManager,
} from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import { nanos } from "@nats-io/transport-node"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type { ComponentFactory, CreateSettings, Health } from "../../component/Component.ts"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { type ComponentSettings, configuredBy } from "../../config/ComponentSettings.ts"
import type { Acknowledge, ClusterObservation, HeartbeatHeard } from "../../domain/ClusterObservation.ts"
import type { GpuRecord } from "../../domain/GpuRecord.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import * as NatsConnection from "../../natsclient/NatsConnection.ts"
import type { Receiver } from "../../pipeline/Receiver.ts"
import { readClusterMessage } from "./ClusterMessage.ts"
import { readStoredFleet } from "./HubInventoryBucket.ts"
import { type HubNatsConfig, hubNatsSettings } from "./HubNatsConfig.ts"
import { ensureHubBucket, ensureHubStream, type SourceState, sourceStates } from "./HubSources.ts"
import { hubStateWriter, loadHubState } from "./HubStateBucket.ts"
import { appliedBefore, sourcePosition } from "./SourcePosition.ts"

const callTimeout = Duration.seconds(10)
/** How long one fetch waits for messages before it returns what it has. */
const fetchExpiresMs = 1_000
const ackTimeoutMs = 5_000
const sourcesPollInterval = Duration.seconds(5)
/** Between attempts to read the hub stream while it fails: from 200 ms, doubling, at most 5 s apart. */
const fetchRetry = Schedule.exponential(Duration.millis(200)).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5)))),
)
/** Writing a batch's changes and acknowledging it: 60 tries, about 5 minutes, then the service stops. */
const acknowledgeRetry = fetchRetry.pipe(Schedule.upTo({ times: 60 }))

const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const call = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, Error> =>
  Effect.tryPromise({ try: run, catch: (cause) => new Error(`${operation}: ${reason(cause)}`) }).pipe(
    Effect.timeout(callTimeout),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(new Error(`${operation}: no answer within ${Duration.format(callTimeout)}`)),
    ),
  )

/** The durable consumer's settings: every message in order, one acknowledgement covering all before it. */
const consumerSettings = (config: HubNatsConfig, startSequence: number | undefined) => ({
  durable_name: config.consumer,
  ack_policy: AckPolicy.All,
  ...(startSequence === undefined
    ? { deliver_policy: DeliverPolicy.All }
    : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSequence }),
  ack_wait: nanos(60_000),
  max_ack_pending: Math.max(1_000, config.batchSize * 4),
})

/**
 * The durable consumer of the hub stream. One that a stopped hub had messages delivered from beyond its
 * acknowledgements is made again from its first unacknowledged message: the server would send those only
 * after `ack_wait`, and the acknowledgement of a later message would cover them unapplied. Returns the
 * messages a stopped hub had been sent and not acknowledged, now delivered again.
 */
const ensureConsumer = (manager: JetStreamManager, config: HubNatsConfig) =>
  call(`consumer ${config.consumer}`, async () => {
    let known: Awaited<ReturnType<typeof manager.consumers.info>>
    try {
      known = await manager.consumers.info(config.stream, config.consumer)
    } catch {
      await manager.consumers.add(config.stream, consumerSettings(config, undefined))
      return 0
    }
    const acknowledged = known.ack_floor.stream_seq
    const unacknowledged = known.delivered.stream_seq - acknowledged
    if (unacknowledged <= 0) return 0
    await manager.consumers.delete(config.stream, config.consumer)
    await manager.consumers.add(config.stream, consumerSettings(config, acknowledged + 1))
    return unacknowledged
  })

const fetchBatch = (consumer: Consumer, batchSize: number) =>
  call("fetch", async () => {
    const messages: Array<JsMsg> = []
    for await (const message of await consumer.fetch({ max_messages: batchSize, expires: fetchExpiresMs })) {
      messages.push(message)
    }
    return messages
  })

/** The header a stream puts on the messages it sources, naming the origin stream and sequence. */
const sourceHeader = "Nats-Stream-Source"

/**
 * The `nats` receiver of a hub: sets up the hub stream and KV bucket sourcing every cluster's, reads what
 * the hub's state bucket holds, then consumes the hub stream with a durable consumer (ack policy all) in
 * batches of at most `batchSize` messages. Each fetched batch is handed to the processor whole, every
 * cluster's records and heartbeats in the stream's order, and acknowledged once: the processor's changes
 * for the whole batch and how far it reaches written to the state bucket in one write, then the batch's
 * last message acked, which acknowledges all before it. Messages at or below the sequence the state bucket
 * says was applied are only acknowledged, so a hub restarted between writing and acknowledging repeats
 * nothing. So is a sourced message at or below its source's mark (the origin sequence applied up to, by
 * its `Nats-Stream-Source` header, kept in the same write): the server copying a cluster's stream again,
 * past the hub stream's duplicate window, puts its messages in under new sequences, and the hub reports
 * none of them twice.
 */
export const make = Effect.fnUntraced(function* (config: HubNatsConfig, settings: CreateSettings) {
  const metrics = yield* ServiceMetrics
  const startError = (error: { readonly message: string }) =>
    new ComponentStartError({ component: settings.id, message: error.message })
  // Catching up writes thousands of state-bucket puts a second: no stack captured per request.
  const connection = yield* NatsConnection.scoped(config, `gpu-serials ${settings.id} (${settings.clusterName})`, {
    asyncTraces: false,
  }).pipe(Effect.mapError(startError))
  const manager = yield* call("JetStream", () => jetstreamManager(connection, { timeout: 10_000 })).pipe(
    Effect.mapError(startError),
  )
  yield* ensureHubStream(
    manager,
    config.stream,
    config.clusterStream,
    config.clusterSubjectPrefix,
    config.clusters,
  ).pipe(Effect.mapError(startError))
  yield* ensureHubBucket(manager, config.kvBucket, config.clusterKvBucket, config.clusters).pipe(
    Effect.mapError(startError),
  )
  const js = manager.jetstream()
  const state: KV = yield* call(`state bucket ${config.stateBucket}`, () =>
    new Kvm(js).create(config.stateBucket, { history: 1 }),
  ).pipe(Effect.mapError(startError))
  const restored = yield* loadHubState(state, config.stateBucket).pipe(Effect.mapError(startError))
  const stateWriter = hubStateWriter(connection, js, state, config.stateBucket)
  // The fleet page knows every cluster's GPUs from the start, not from each cluster's next records.
  const stored = yield* readStoredFleet(js, config.kvBucket, restored.snapshot.places).pipe(
    Effect.tap(({ gpus, skipped }) =>
      (skipped > 0 ? Effect.logWarning : Effect.logInfo)("fleet page read the GPUs of the hub KV bucket").pipe(
        Effect.annotateLogs({ bucket: config.kvBucket, gpus: gpus.length, skipped }),
      ),
    ),
    Effect.map(({ gpus }) => gpus),
    Effect.catch((error) =>
      Effect.logWarning("hub KV bucket not read; the fleet page knows each cluster's GPUs from its next records").pipe(
        Effect.annotateLogs({ bucket: config.kvBucket, reason: error.message }),
        Effect.as([]),
      ),
    ),
  )
  const redelivered = yield* ensureConsumer(manager, config).pipe(Effect.mapError(startError))
  if (redelivered > 0) {
    yield* Effect.logInfo("hub consumer made again from its first unacknowledged message").pipe(
      Effect.annotateLogs({ consumer: config.consumer, stream: config.stream, redelivered }),
    )
  }
  const consumer = yield* call("consumer", () => js.consumers.get(config.stream, config.consumer)).pipe(
    Effect.mapError(startError),
  )

  const observations = yield* Queue.bounded<ClusterObservation, Cause.Done>(4)
  yield* Effect.addFinalizer(() => Queue.end(observations))
  let applied = restored.applied.sequence
  /** The sources' marks of every message handed to the processor, ahead of what is acknowledged. */
  let delivered: ReadonlyMap<string, number> = restored.applied.sources
  const readProblem = yield* Ref.make<string | undefined>(undefined)

  const acknowledgeUpTo =
    (last: JsMsg, marks: ReadonlyMap<string, number>): Acknowledge =>
    (changes) =>
      stateWriter.write(changes, { sequence: last.seq, sources: marks }).pipe(
        Effect.andThen(call("acknowledge", () => last.ackAck({ timeout: ackTimeoutMs }))),
        Effect.retry(acknowledgeRetry),
        Effect.tap(() =>
          Effect.sync(() => {
            applied = Math.max(applied, last.seq)
          }),
        ),
        Effect.catch((error) =>
          Effect.die(new Error(`hub state bucket ${config.stateBucket}: ${error.message}; stopping, nothing is lost`)),
        ),
      )

  /** Reads a fetched batch whole and hands it over as one observation, acknowledged by its last message. */
  const deliverBatch = Effect.fnUntraced(function* (messages: ReadonlyArray<JsMsg>) {
    const last = messages.at(-1)
    if (last === undefined) return
    const time = new Date(yield* Clock.currentTimeMillis)
    const records: Array<GpuRecord> = []
    const heartbeats: Array<HeartbeatHeard> = []
    /** The sources' marks with this batch's messages delivered; the batch's acknowledgement writes them. */
    const marks = new Map(delivered)
    let repeated = 0
    for (const message of messages) {
      // Applied before a restart: its changes are in the state bucket; only its acknowledgement was lost.
      if (message.seq <= applied) continue
      const position = sourcePosition(message.headers?.get(sourceHeader) || undefined)
      if (position !== undefined && appliedBefore(marks, position)) {
        // A copy of a cluster's message the hub has had: the server sourced it again under a new sequence.
        repeated++
        continue
      }
      if (position !== undefined) marks.set(position.source, position.sequence)
      const read = readClusterMessage(message.string())
      if (read._tag === "Record") records.push(read.record)
      else if (read._tag === "Heartbeat") heartbeats.push({ cluster: read.cluster, sentAt: read.sentAt })
      else
        yield* Effect.logWarning("hub stream message skipped").pipe(
          Effect.annotateLogs({ stream: config.stream, sequence: message.seq, reason: read.reason }),
        )
    }
    delivered = marks
    if (repeated > 0) {
      yield* metrics.hubMessagesRepeated(repeated)
      yield* Effect.logDebug("hub stream messages sourced again, acknowledged without reporting").pipe(
        Effect.annotateLogs({ stream: config.stream, count: repeated }),
      )
    }
    yield* Queue.offer(observations, {
      _tag: "ClusterBatch",
      records,
      heartbeats,
      time,
      acknowledge: acknowledgeUpTo(last, marks),
    })
  })

  yield* Queue.offer(observations, {
    _tag: "FleetRestored",
    clusters: config.clusters,
    snapshot: restored.snapshot,
    stored,
    time: new Date(yield* Clock.currentTimeMillis),
  })

  yield* fetchBatch(consumer, config.batchSize).pipe(
    Effect.tapError((error) => Ref.set(readProblem, `hub stream ${config.stream}: ${error.message}`)),
    Effect.retry(fetchRetry),
    Effect.tap(() => Ref.set(readProblem, undefined)),
    Effect.flatMap(deliverBatch),
    Effect.forever,
    Effect.forkScoped,
  )

  const sources = yield* Ref.make<ReadonlyMap<string, SourceState> | undefined>(undefined)
  const sourcesProblem = yield* Ref.make<string | undefined>("hub stream sources not read yet")
  yield* sourceStates(manager, config.stream).pipe(
    Effect.tap((states) => Ref.set(sources, states)),
    Effect.tap(() => Ref.set(sourcesProblem, undefined)),
    Effect.catch((error) => Ref.set(sourcesProblem, `hub stream ${config.stream}: ${error.message}`)),
    Effect.repeat(Schedule.spaced(sourcesPollInterval)),
    Effect.forkScoped,
  )
  yield* metrics.observeHubSourceLag(() => {
    const known = Ref.getUnsafe(sources)
    return new Map(config.clusters.map((cluster) => [cluster, known?.get(cluster)?.lag ?? 0]))
  })

  const health: Effect.Effect<Health> = Effect.gen(function* () {
    const problem = yield* Ref.get(sourcesProblem)
    if (problem !== undefined) return { healthy: false, message: problem }
    const known = (yield* Ref.get(sources)) ?? new Map<string, SourceState>()
    const inactive = config.clusters.filter((cluster) => {
      const source = known.get(cluster)
      return (
        source === undefined ||
        source.sinceActiveMs === undefined ||
        source.sinceActiveMs > config.sourceInactiveAfterMs
      )
    })
    return inactive.length === 0
      ? { healthy: true }
      : {
          healthy: false,
          message: `hub stream sources not active for ${Math.round(config.sourceInactiveAfterMs / 1000)}s: ${inactive.join(", ")}`,
        }
  })
  const readings: Effect.Effect<Health> = Ref.get(readProblem).pipe(
    Effect.map((problem): Health => (problem === undefined ? { healthy: true } : { healthy: false, message: problem })),
  )
  return { observations, health, readings } satisfies Receiver<ClusterObservation>
})

/** The `nats` receiver factory: a hub's receiver, making cluster observations for the `fleet` processor. */
export const factory: ComponentFactory<"receiver", HubNatsConfig, Receiver<ClusterObservation>, ServiceMetrics> & {
  readonly settings: ComponentSettings<HubNatsConfig>
  readonly observes: "cluster"
} = {
  kind: "receiver",
  type: "nats",
  observes: "cluster",
  ...configuredBy(hubNatsSettings),
  create: (config, settings) => make(config, settings),
}
