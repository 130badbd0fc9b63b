import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { BodyBuffer } from "../../../src/kubeclient/rest/BodyBuffers.ts"
import { readBody } from "../../../src/kubeclient/rest/KubeTransport.ts"

/** A local server answering `body` with `status`, and a keep-alive agent, for one test. */
const withServer = async (
  status: number,
  body: string,
  use: (get: () => Promise<http.IncomingMessage>) => Promise<void>,
): Promise<void> => {
  const server = http.createServer((_request, response) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const agent = new http.Agent({ keepAlive: true })
  const { port } = server.address() as AddressInfo
  const get = () =>
    new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get({ host: "127.0.0.1", port, path: "/api/v1/nodes", agent }, resolve).on("error", reject),
    )
  try {
    await use(get)
  } finally {
    agent.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
}

/** The listeners a response still has for the events a read listens to. */
const listeners = (response: http.IncomingMessage) =>
  Object.fromEntries(["data", "end", "error", "close"].map((event) => [event, response.listenerCount(event)]))

describe("readBody", () => {
  it("gathers an accepted answer into the buffer it is given", async () => {
    const page = JSON.stringify({ kind: "NodeList", items: [{ metadata: { name: "gpu-1" } }] })
    await withServer(200, page, async (get) => {
      const into = new BodyBuffer()
      const body = await readBody("list nodes", await get(), new AbortController().signal, undefined, into)
      assert.strictEqual(body.toString("utf8"), page)
      assert.strictEqual(into.length, Buffer.byteLength(page))
    })
  })

  it("leaves on the response, once settled, no handler that could hold the buffer: a kept-alive socket holds its first response", async () => {
    await withServer(200, "x".repeat(100_000), async (get) => {
      const response = await get()
      const before = listeners(response)
      const signal = new AbortController().signal
      await readBody("list nodes", response, signal, () => undefined, new BodyBuffer())
      const after = listeners(response)
      for (const event of ["data", "end", "close"] as const)
        assert.strictEqual(after[event], before[event], `${event} listeners left on the response`)
      // One error listener stays, holding nothing, so that a late reset of the socket is not thrown.
      assert.strictEqual(after.error, (before.error ?? 0) + 1)
    })
  })

  it("takes its handlers off a refused answer too, and fails with the Status message", async () => {
    const status = JSON.stringify({ kind: "Status", status: "Failure", message: 'nodes is forbidden: User "x"' })
    await withServer(403, status, async (get) => {
      const response = await get()
      const before = listeners(response)
      const failure = await readBody("list nodes", response, new AbortController().signal).then(
        () => undefined,
        (error: unknown) => error,
      )
      assert.include(String((failure as { detail?: string } | undefined)?.detail), "nodes is forbidden")
      assert.strictEqual(listeners(response).data, before.data)
      assert.strictEqual(listeners(response).close, before.close)
    })
  })
})
