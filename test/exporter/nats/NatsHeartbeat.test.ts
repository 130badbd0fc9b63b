import { assert, describe, it } from "@effect/vitest"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { heartbeatSchema } from "../../../src/domain/ClusterHeartbeat.ts"
import * as NatsExporter from "../../../src/exporter/nats/NatsExporter.ts"
import { type NatsServer, startNatsServer } from "./NatsServer.ts"

let server: NatsServer
let observer: NatsConnection

beforeAll(async () => {
  server = await startNatsServer()
  observer = await connect({ servers: server.url })
})

afterAll(async () => {
  await observer?.close()
  await server?.dispose()
})

describe("the nats exporter's heartbeat", () => {
  it.live("publishes the cluster's heartbeat into its stream every interval, on a subject no event has", () =>
    Effect.gen(function* () {
      yield* NatsExporter.factory.create(
        {
          ...NatsExporter.factory.defaultConfig,
          servers: [server.url],
          stream: "BEATS",
          subjectPrefix: "gpu.beats",
          heartbeatIntervalMs: 200,
        },
        { id: "nats", clusterName: "prod-eu", serviceVersion: "0.1.0" },
      )
      const manager = yield* Effect.promise(() => jetstreamManager(observer))
      const count = () =>
        Effect.promise(() =>
          manager.streams.info("BEATS").then(
            (info) => info.state.messages,
            () => 0,
          ),
        )
      let messages = yield* count()
      for (let attempt = 0; attempt < 100 && messages < 2; attempt++) {
        yield* Effect.sleep("100 millis")
        messages = yield* count()
      }
      assert.isAtLeast(messages, 2)
      const last = yield* Effect.promise(() =>
        manager.streams.getMessage("BEATS", { last_by_subj: "gpu.beats.prod-eu.heartbeat" }),
      )
      const heartbeat = last?.json<{ schema: string; cluster: string; time: string }>()
      assert.strictEqual(heartbeat?.schema, heartbeatSchema)
      assert.strictEqual(heartbeat?.cluster, "prod-eu")
      assert.isTrue(Number.isFinite(Date.parse(heartbeat?.time ?? "")))
    }).pipe(Effect.scoped),
  )
})
