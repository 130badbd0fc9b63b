import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { staticAccess } from "../../../src/kubeclient/clientcmd/ClusterAccess.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"

/** An API server that takes every exec upgrade and never answers it; counts them, and those closed. */
const silentServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const upgrades: Array<Socket> = []
    const server: Server = createServer()
    server.on("upgrade", (_request, socket: Socket) => {
      upgrades.push(socket)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const closed = () => upgrades.filter((socket) => socket.destroyed || socket.readableEnded).length
    return { server, upgrades, closed, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }),
  ({ server, upgrades }) =>
    Effect.promise(async () => {
      for (const socket of upgrades) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }),
)

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() })

const call = {
  namespace: "gpu-operator",
  pod: "plugin-a",
  container: "nvidia-device-plugin",
  argv: ["nvidia-smi", "-L"],
  stdout: discard(),
  stderr: discard(),
  onStatus: () => {},
}

const apiOf = (url: string, rate: { readonly qps: number; readonly burst: number }, handshakeMs: number) =>
  KubeApi.make(staticAccess({ server: url, insecureSkipTlsVerify: false }, { token: "t" }), {
    ...rate,
    requestTimeoutMs: 3_000,
    execHandshakeTimeoutMs: handshakeMs,
  })

const eventually = (condition: () => boolean) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 100 && !condition(); tries++) yield* Effect.sleep("20 millis")
    assert.isTrue(condition())
  })

describe("KubeApi exec with a deadline", () => {
  it.live("an upgrade not answered by the deadline fails with CallDeadlinePassed and its connection is closed", () =>
    Effect.gen(function* () {
      const server = yield* silentServer
      const api = yield* apiOf(server.url, { qps: 100, burst: 100 }, 10_000)
      const deadline = (yield* Clock.currentTimeMillis) + 300
      const error = yield* Effect.flip(Effect.scoped(api.exec(call, deadline)))
      assert.strictEqual(error._tag, "CallDeadlinePassed")
      assert.isAtLeast(yield* Clock.currentTimeMillis, deadline)
      assert.strictEqual(server.upgrades.length, 1)
      yield* eventually(() => server.closed() === 1)
    }),
  )

  it.live("without a deadline, the handshake's own deadline applies and fails as a KubeApiError", () =>
    Effect.gen(function* () {
      const server = yield* silentServer
      const api = yield* apiOf(server.url, { qps: 100, burst: 100 }, 200)
      const error = yield* Effect.flip(Effect.scoped(api.exec(call)))
      assert.strictEqual(error._tag, "KubeApiError")
      yield* eventually(() => server.closed() === 1)
    }),
  )

  it.live("a token due after the deadline fails the call with CallDeadlinePassed before any upgrade", () =>
    Effect.gen(function* () {
      const server = yield* silentServer
      const api = yield* apiOf(server.url, { qps: 1, burst: 1 }, 10_000)
      const first = (yield* Clock.currentTimeMillis) + 100
      assert.strictEqual((yield* Effect.flip(Effect.scoped(api.exec(call, first))))._tag, "CallDeadlinePassed")
      const second = (yield* Clock.currentTimeMillis) + 100
      const error = yield* Effect.flip(Effect.scoped(api.exec(call, second)))
      assert.strictEqual(error._tag, "CallDeadlinePassed")
      assert.isAtLeast(yield* Clock.currentTimeMillis, second)
      assert.strictEqual(server.upgrades.length, 1)
    }),
  )

  it.live("an interrupted upgrade closes its connection", () =>
    Effect.gen(function* () {
      const server = yield* silentServer
      const api = yield* apiOf(server.url, { qps: 100, burst: 100 }, 10_000)
      const deadline = (yield* Clock.currentTimeMillis) + 5_000
      yield* Effect.scoped(api.exec(call, deadline)).pipe(Effect.timeoutOption("200 millis"))
      yield* eventually(() => server.closed() === 1)
    }),
  )
})
