import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { upsert } from "../../src/domain/InventoryChange.ts"
import { Fleet, type FleetOptions } from "../../src/fleet/Fleet.ts"
import { contentSecurityPolicy } from "../../src/fleet/FleetHttp.ts"
import { HealthServer } from "../../src/health/HealthServer.ts"
import { eventOf, knownGpu, t0 } from "../fleet/FleetFixtures.ts"
import { telemetryLayer } from "../metrics/TelemetryLayers.ts"

/** A built page as the page's build leaves it: the shell and its assets side by side. */
const pageDir = (() => {
  const dir = mkdtempSync(join(tmpdir(), "fleet-page-"))
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "index.html"), '<!doctype html><script type="module" src="/assets/fleet.js"></script>\n')
  writeFileSync(join(dir, "fleet.js"), `export const fleet = ${JSON.stringify("x".repeat(4000))}\n`)
  return dir
})()

const fleetOf = (options: Partial<FleetOptions> = {}) => {
  const fleet = Fleet.make({ cluster: "test", eventCapacity: 3, pageDir, ...options })
  const gpus = Array.from({ length: 25 }, (_, i) =>
    knownGpu({
      uuid: `GPU-${String(i).padStart(4, "0")}-aaaa`,
      node: `node-${String(Math.floor(i / 8)).padStart(2, "0")}`,
      index: i % 8,
      serial: `16509240${String(i).padStart(5, "0")}`,
      state: i === 3 ? "failed" : "ok",
    }),
  )
  fleet.view.apply(gpus.map(upsert))
  const first = gpus[0]
  if (first !== undefined) fleet.view.record([eventOf(first, "added", t0)])
  return fleet
}

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: string
}

const get = (port: number, path: string, headers: Record<string, string> = {}, method = "GET") =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      signal: AbortSignal.timeout(5_000),
    })
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

const withServer = <A>(fleet: Fleet["Service"] | undefined, use: (port: number) => Effect.Effect<A>) =>
  Effect.gen(function* () {
    const { port } = yield* HealthServer
    return yield* use(port)
  }).pipe(Effect.scoped, Effect.provide(telemetryLayer({ server: fleet === undefined ? {} : { fleet } })))

const parsed = (answer: Answer) => JSON.parse(answer.body)

describe("the fleet API", () => {
  it.live("says the status and lists GPUs page by page in a stable order", () =>
    withServer(fleetOf(), (port) =>
      Effect.gen(function* () {
        const status = yield* get(port, "/api/v1/status")
        assert.strictEqual(status.headers.get("content-type"), "application/json; charset=utf-8")
        assert.deepStrictEqual(parsed(status), {
          cluster: "test",
          role: "single",
          source: "inventory",
          gpus: 25,
          nodes: 4,
          events: { capacity: 3 },
          history: "process",
        })
        const seen: Array<string> = []
        let cursor = ""
        for (let page = 0; page < 5; page++) {
          const answer = parsed(yield* get(port, `/api/v1/gpus?limit=10${cursor}`))
          assert.strictEqual(answer.total, 25)
          seen.push(...answer.items.map((item: { uuid: string }) => item.uuid))
          if (answer.nextCursor === undefined) break
          cursor = `&cursor=${answer.nextCursor}`
        }
        assert.strictEqual(seen.length, 25)
        assert.deepStrictEqual(seen, [...seen].sort())
        const found = parsed(yield* get(port, "/api/v1/gpus?serial=1650924000009"))
        assert.deepStrictEqual(
          found.items.map((item: { node: string; index: number; gpu: string }) => [item.node, item.index, item.gpu]),
          [["node-01", 1, "1650924000009"]],
        )
        const failed = parsed(yield* get(port, "/api/v1/gpus?health=failed"))
        assert.deepStrictEqual(
          failed.items.map((item: { uuid: string }) => item.uuid),
          ["GPU-0003-aaaa"],
        )
      }),
    ),
  )

  it.live("answers one GPU, its history, a node and the events; 404 for what it does not know", () =>
    withServer(fleetOf(), (port) =>
      Effect.gen(function* () {
        const gpu = parsed(yield* get(port, "/api/v1/gpus/GPU-0009-aaaa"))
        assert.strictEqual(gpu.source, "gpu-operator/nvidia-device-plugin-node-01")
        assert.strictEqual(gpu.serialShared, false)
        assert.strictEqual(gpu.since, t0.toISOString())
        const history = parsed(yield* get(port, "/api/v1/gpus/GPU-0000-aaaa/history"))
        assert.strictEqual(history.from, "process")
        assert.strictEqual(history.complete, true)
        assert.deepStrictEqual(
          history.entries.map((entry: { event: string }) => entry.event),
          ["added"],
        )
        const bounded = parsed(yield* get(port, "/api/v1/gpus/GPU-0009-aaaa/history"))
        assert.strictEqual(bounded.complete, false)
        assert.match(bounded.note, /what this process saw since/)
        const node = parsed(yield* get(port, "/api/v1/nodes/node-01"))
        assert.deepStrictEqual(
          node.gpus.map((item: { index: number }) => item.index),
          [0, 1, 2, 3, 4, 5, 6, 7],
        )
        const events = parsed(yield* get(port, "/api/v1/events?kind=added"))
        assert.strictEqual(events.capacity, 3)
        assert.strictEqual(events.items[0].uuid, "GPU-0000-aaaa")
        for (const path of [
          "/api/v1/gpus/GPU-none",
          "/api/v1/nodes/node-none",
          "/api/v1/gpus/GPU-none/history",
          "/api/v2/x",
        ]) {
          const missing = yield* get(port, path)
          assert.strictEqual(missing.status, 404, path)
          assert.strictEqual(parsed(missing).error, "not-found")
        }
      }),
    ),
  )

  it.live("names the bad parameter with 400, and refuses other methods with 405", () =>
    withServer(fleetOf(), (port) =>
      Effect.gen(function* () {
        for (const [path, parameter] of [
          ["/api/v1/gpus?limit=0", "limit"],
          ["/api/v1/gpus?health=sick", "health"],
          ["/api/v1/gpus?cursor=!", "cursor"],
          ["/api/v1/nodes?failing=maybe", "failing"],
          ["/api/v1/events?since=monday", "since"],
          ["/api/v1/gpus?colour=green", "colour"],
        ] as const) {
          const answer = yield* get(port, path)
          assert.strictEqual(answer.status, 400, path)
          const body = parsed(answer)
          assert.strictEqual(body.error, "bad-parameter")
          assert.strictEqual(body.parameter, parameter)
          assert.include(body.message, parameter)
          assert.notInclude(answer.body, "    at ")
        }
        const posted = yield* get(port, "/api/v1/gpus", {}, "POST")
        assert.strictEqual(posted.status, 405)
        assert.strictEqual(parsed(posted).error, "method-not-allowed")
      }),
    ),
  )

  it.live("tags list answers and answers 304 to their tag", () =>
    withServer(fleetOf(), (port) =>
      Effect.gen(function* () {
        const first = yield* get(port, "/api/v1/gpus?q=node-02")
        const etag = first.headers.get("etag")
        assert.isString(etag)
        const again = yield* get(port, "/api/v1/gpus?q=node-02", { "if-none-match": etag ?? "" })
        assert.strictEqual(again.status, 304)
        assert.strictEqual(again.body, "")
        const other = yield* get(port, "/api/v1/gpus?q=node-01", { "if-none-match": etag ?? "" })
        assert.strictEqual(other.status, 200)
      }),
    ),
  )

  it.live("with a token, needs it on /api only; probes, metrics and the page stay open", () =>
    withServer(fleetOf({ token: "s3cr3t-token" }), (port) =>
      Effect.gen(function* () {
        const refused = yield* get(port, "/api/v1/gpus")
        assert.strictEqual(refused.status, 401)
        assert.strictEqual(parsed(refused).error, "unauthorized")
        assert.notInclude(refused.body, "s3cr3t")
        assert.strictEqual((yield* get(port, "/api/v1/gpus", { authorization: "Bearer wrong" })).status, 401)
        assert.strictEqual((yield* get(port, "/api/v1/gpus", { authorization: "Bearer s3cr3t-token" })).status, 200)
        assert.strictEqual((yield* get(port, "/healthz")).status, 200)
        assert.strictEqual((yield* get(port, "/metrics")).status, 200)
        assert.strictEqual((yield* get(port, "/")).status, 200)
      }),
    ),
  )

  it.live("as a follower without a store, says so, names the leader and lists nothing", () => {
    const fleet = fleetOf()
    fleet.view.clearInventory()
    fleet.setRole({ role: "follower", source: "none", leader: "gpu-serials-7d9f-abcde" })
    return withServer(fleet, (port) =>
      Effect.gen(function* () {
        const status = parsed(yield* get(port, "/api/v1/status"))
        assert.strictEqual(status.role, "follower")
        assert.strictEqual(status.leader, "gpu-serials-7d9f-abcde")
        assert.strictEqual(status.source, "none")
        assert.deepStrictEqual(parsed(yield* get(port, "/api/v1/gpus")), { items: [], total: 0 })
      }),
    )
  })
})

describe("a GPU's history from the durable store", () => {
  it.live("answers from it when it has rows, from the process when it has none or fails", () => {
    const fleet = fleetOf()
    fleet.setDurableHistory((uuid, limit) =>
      uuid === "GPU-0001-aaaa"
        ? Effect.succeed(
            [
              { time: "2025-06-02T08:00:00.000Z", event: "moved", node: "node-00", machine: "i-node-00", chassis: "" },
              { time: "2025-06-01T08:00:00.000Z", event: "added", node: "node-07", machine: "i-node-07", chassis: "" },
            ].slice(0, limit),
          )
        : uuid === "GPU-0000-aaaa"
          ? Effect.fail({ message: "connection refused" })
          : Effect.succeed(undefined),
    )
    return withServer(fleet, (port) =>
      Effect.gen(function* () {
        assert.strictEqual(parsed(yield* get(port, "/api/v1/status")).history, "postgres")
        const stored = parsed(yield* get(port, "/api/v1/gpus/GPU-0001-aaaa/history?limit=1"))
        assert.deepStrictEqual(
          [stored.from, stored.complete, stored.entries.length, stored.entries[0].event],
          ["postgres", true, 1, "moved"],
        )
        const fallen = parsed(yield* get(port, "/api/v1/gpus/GPU-0000-aaaa/history"))
        assert.strictEqual(fallen.from, "process")
        assert.strictEqual(fallen.entries[0].event, "added")
      }),
    )
  })
})

describe("the fleet page's files", () => {
  it.live("serves the shell at / and at a GPU's or node's path, and its assets, with the CSP, tags and gzip", () =>
    withServer(fleetOf(), (port) =>
      Effect.gen(function* () {
        for (const path of ["/", "/gpus/GPU-0001-aaaa", "/nodes/node-01"]) {
          const shell = yield* get(port, path)
          assert.strictEqual(shell.status, 200, path)
          assert.strictEqual(shell.headers.get("content-type"), "text/html; charset=utf-8")
          assert.strictEqual(shell.headers.get("content-security-policy"), contentSecurityPolicy)
          assert.include(shell.body, "/assets/fleet.js")
        }
        const script = yield* get(port, "/assets/fleet.js")
        assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
        const etag = script.headers.get("etag") ?? ""
        assert.strictEqual((yield* get(port, "/assets/fleet.js", { "if-none-match": etag })).status, 304)
        const zipped = yield* Effect.promise(() =>
          import("node:http").then(
            (http) =>
              new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
                http
                  .get(
                    { port, host: "127.0.0.1", path: "/assets/fleet.js", headers: { "accept-encoding": "gzip" } },
                    (res) => {
                      const chunks: Array<Buffer> = []
                      res.on("data", (chunk: Buffer) => chunks.push(chunk))
                      res.on("end", () =>
                        resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }),
                      )
                    },
                  )
                  .on("error", reject)
              }),
          ),
        )
        assert.strictEqual(zipped.encoding, "gzip")
        assert.include(gunzipSync(zipped.body).toString("utf8"), "export const fleet")
        assert.isBelow(zipped.body.length, 200)
        assert.strictEqual((yield* get(port, "/assets/..%2Fsecret")).status, 404)
        assert.strictEqual((yield* get(port, "/assets/missing.js")).status, 404)
      }),
    ),
  )

  it.live("without the fleet, serves neither page nor API", () =>
    withServer(undefined, (port) =>
      Effect.gen(function* () {
        assert.strictEqual((yield* get(port, "/")).status, 404)
        assert.strictEqual((yield* get(port, "/api/v1/status")).status, 404)
        assert.strictEqual((yield* get(port, "/healthz")).status, 200)
      }),
    ),
  )
})
