import { jetstreamManager } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import type { ExporterFactory } from "../../pipeline/Exporter.ts"
import * as QueuedExporter from "../exporterhelper/QueuedExporter.ts"
import type { QueueSettings } from "../exporterhelper/QueueSettings.ts"
import { type NatsExporterConfig, natsSettings } from "./NatsConfig.ts"
import * as NatsCoreSink from "./NatsCoreSink.ts"
import * as NatsFailureLog from "./NatsFailureLog.ts"
import * as NatsHeartbeat from "./NatsHeartbeat.ts"
import * as NatsJetStreamSink from "./NatsJetStreamSink.ts"
import * as NatsLink from "./NatsLink.ts"
import { isPermanent, natsReason } from "./NatsPermanentError.ts"
import { ensureStream } from "./NatsStream.ts"
import { NatsStreamError } from "./NatsStreamError.ts"

/** How long one JetStream publish waits for its ack before the batch is retried. */
const ackTimeout = Duration.seconds(4)

const shutdownTimeout = Duration.seconds(5)

const managerTimeout = Duration.seconds(10)

export interface NatsExporterOptions {
  /** Buffer and retry settings that replace the section's. */
  readonly queue?: QueueSettings
}

/**
 * Checks, creates or updates the stream on a new connection, when the exporter publishes to one. The
 * error's message names the stream, as readiness and the logs show it.
 */
const prepareStream =
  (config: NatsExporterConfig) =>
  (connection: NatsConnection): Effect.Effect<void, NatsStreamError> => {
    const stream = config.stream
    if (stream === undefined) return Effect.void
    return Effect.tryPromise({
      try: () => jetstreamManager(connection),
      catch: (cause) =>
        new NatsStreamError({ stream, message: `JetStream: ${natsReason(cause)}`, permanent: isPermanent(cause) }),
    }).pipe(
      Effect.timeout(managerTimeout),
      Effect.catchTag("TimeoutError", () =>
        Effect.fail(new NatsStreamError({ stream, message: "JetStream did not answer", permanent: false })),
      ),
      Effect.flatMap((manager) => ensureStream(manager, stream, config.subjectPrefix, config.streamSettings)),
      Effect.mapError(
        (error) =>
          new NatsStreamError({
            stream,
            message: `NATS stream ${stream}: ${error.message}`,
            permanent: error.permanent,
          }),
      ),
    )
  }

/**
 * The `nats` exporter factory: one message per GPU event on `<prefix>.<cluster>.<node>.<event>`
 * through the common bounded, retried queue; JetStream publish with acks and de-duplication when a
 * stream is configured, core publish and flush otherwise. NATS being unreachable does not stop the
 * start: records wait in the buffer (up to its size, drops counted beyond) and are written in order
 * once the connection is made. A stream NATS refuses for good at start fails the start.
 */
export const makeFactory = (
  options: NatsExporterOptions = {},
): ExporterFactory<NatsExporterConfig> & Configured<NatsExporterConfig> => ({
  kind: "exporter",
  type: "nats",
  ...configuredBy(natsSettings),
  create: (config, settings) =>
    Effect.gen(function* () {
      const failures = yield* NatsFailureLog.make({
        exporter: settings.id,
        ...(config.stream === undefined ? {} : { stream: config.stream }),
      })
      const link = yield* NatsLink.make({
        config,
        name: `gpu-serials ${settings.id} (${settings.clusterName})`,
        prepare: prepareStream(config),
        failures,
      }).pipe(Effect.mapError((error) => new ComponentStartError({ component: settings.id, message: error.message })))
      const sink =
        config.stream === undefined
          ? NatsCoreSink.make({ link, subjectPrefix: config.subjectPrefix, failures })
          : NatsJetStreamSink.make({
              link,
              subjectPrefix: config.subjectPrefix,
              stream: config.stream,
              expectStream: config.streamExpect,
              ackTimeout,
              failures,
            })
      yield* NatsHeartbeat.start({
        link,
        subjectPrefix: config.subjectPrefix,
        ...(config.stream === undefined ? {} : { stream: config.stream }),
        cluster: settings.clusterName,
        intervalMs: config.heartbeatIntervalMs,
      })
      const queue = options.queue ?? config.queue
      return yield* QueuedExporter.make({
        id: settings.id,
        sink,
        settings: {
          ...queue,
          writeTimeout: Duration.max(queue.writeTimeout, Duration.sum(ackTimeout, Duration.seconds(1))),
        },
        shutdownTimeout,
      })
    }),
})

export const factory: ExporterFactory<NatsExporterConfig> & Configured<NatsExporterConfig> = makeFactory()
