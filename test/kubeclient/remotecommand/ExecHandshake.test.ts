import { createServer, type Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { openExecSocket } from "../../../src/kubeclient/remotecommand/ExecHandshake.ts"
import { KubeApiError } from "../../../src/kubeclient/rest/KubeApiError.ts"

let server: Server | undefined
const open: Array<ServerResponse> = []

afterEach(async () => {
  for (const response of open.splice(0)) response.destroy()
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
  server = undefined
})

/** An API server that refuses every upgrade the way `refuse` answers it. */
const refusingServer = async (refuse: (response: ServerResponse) => void): Promise<string> => {
  const started = createServer()
  started.on("upgrade", (request, socket) => {
    const response = new ServerResponse(request)
    response.assignSocket(socket as Parameters<ServerResponse["assignSocket"]>[0])
    open.push(response)
    refuse(response)
  })
  await new Promise<void>((resolve) => started.listen(0, "127.0.0.1", resolve))
  server = started
  return `ws://127.0.0.1:${(started.address() as AddressInfo).port}/api/v1/namespaces/ns/pods/p/exec`
}

/** An API server that refuses every upgrade with 403 and a Forbidden Status carrying `message`. */
const forbiddingServer = (message: string): Promise<string> =>
  refusingServer((response) => {
    response.writeHead(403, { "Content-Type": "application/json", Connection: "close" })
    response.end(JSON.stringify({ kind: "Status", status: "Failure", message, reason: "Forbidden", code: 403 }))
  })

/** What the socket's first error was, as client-node's handler would receive it. */
const firstError = (uri: string, timeoutMs: number): Promise<unknown> =>
  new Promise((resolve) => {
    const socket = openExecSocket(uri, ["v5.channel.k8s.io"], {}, timeoutMs)
    socket.onerror = (event) => resolve(event.error)
    socket.onopen = () => resolve("opened")
  })

describe("exec handshake", () => {
  it("keeps the Status message of a refused upgrade and its HTTP status", async () => {
    const uri = await forbiddingServer(
      'pods "p" is forbidden: User "u" cannot create resource "pods/exec" in API group ""',
    )
    const error = await firstError(uri, 2_000)
    expect(error).toBeInstanceOf(KubeApiError)
    expect(error).toMatchObject({ kind: "rejected", status: 403, detail: expect.stringContaining("is forbidden") })
  })

  it("keeps the start and the end of a long refusal, such as an admission policy's message", async () => {
    const policyMessage = "gpu-serials may exec only nvidia-smi (argv[0] nvidia-smi or /usr/bin/nvidia-smi): no shell"
    const uri = await forbiddingServer(
      `pods "nvidia-device-plugin-daemonset-x2x4k" is forbidden: ValidatingAdmissionPolicy 'gpu-serials-exec' with binding 'gpu-serials-exec' denied request: ${policyMessage}`,
    )
    const error = await firstError(uri, 2_000)
    expect(error).toBeInstanceOf(KubeApiError)
    const detail = (error as KubeApiError).detail
    expect(detail.length).toBeLessThanOrEqual(160)
    expect(detail).toMatch(/^pods "nvidia-device-plugin-daemonset-x2x4k" is forbidden: /)
    expect(detail).toContain("…")
    expect(detail.endsWith("(argv[0] nvidia-smi or /usr/bin/nvidia-smi): no shell")).toBe(true)
  })

  it("gives up on a body that never ends within the handshake timeout, with the status alone", async () => {
    const uri = await refusingServer((response) => {
      response.writeHead(400, { "Content-Type": "application/json" })
      response.write('{"kind":"Status","message":"container x is not')
    })
    const error = await firstError(uri, 300)
    expect(error).toMatchObject({ kind: "rejected", status: 400, detail: "Unexpected server response: 400" })
  })
})
