import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import type { V1Status } from "@kubernetes/client-node"
import { Deferred, Effect } from "effect"
import { afterAll } from "vitest"
import { WebSocketServer } from "ws"
import { type ClusterAccess, inClusterAccess, staticAccess } from "../../../src/kubeclient/clientcmd/ClusterAccess.ts"
import { KubeApi } from "../../../src/kubeclient/rest/KubeApi.ts"
import { secureContexts } from "../../../src/kubeclient/rest/KubeTransport.ts"
import { makeTestCertificates } from "../../support/TestCertificates.ts"

// TLS cases the simulated cluster does not cover (a client certificate, a proxy's page, the pod's
// service account) are checked against this small HTTPS API server with a certificate made for the test.

const token = "tls-test-token"

interface SeenRequest {
  readonly url: string
  readonly authorization: string | undefined
}

/** A CA and a server certificate for 127.0.0.1, made once for the file; `ca` is what a kubeconfig trusts. */
const pki = makeTestCertificates()
afterAll(() => pki.remove())

const node = (name: string) => ({ metadata: { name, uid: `uid-${name}`, resourceVersion: "7" } })

/** An HTTPS API server: two pages of nodes, and an exec that prints, warns and succeeds. */
const startTlsServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const { serverKey: key, serverCert: cert, ca } = pki
    const seen: Array<SeenRequest> = []
    const server: Server = createServer({ key, cert }, (request, response) => {
      seen.push({ url: request.url ?? "", authorization: request.headers.authorization })
      if (request.headers.authorization !== `Bearer ${token}`) {
        response.writeHead(401, { "Content-Type": "application/json" })
        response.end(JSON.stringify({ kind: "Status", code: 401, message: "Unauthorized" }))
        return
      }
      const url = new URL(request.url ?? "/", "https://127.0.0.1")
      if (url.pathname.startsWith("/api/v1/namespaces/proxied/")) {
        response.writeHead(200, { "Content-Type": "text/html" })
        response.end("<html>a proxy's login page</html>")
        return
      }
      const second = url.searchParams.get("continue") === "page-2"
      response.writeHead(200, { "Content-Type": "application/json" })
      response.end(
        JSON.stringify({
          kind: "NodeList",
          metadata: { resourceVersion: "42", ...(second ? {} : { continue: "page-2" }) },
          items: second ? [node("c")] : [node("a"), node("b")],
        }),
      )
    })
    const sockets = new WebSocketServer({ server })
    sockets.on("connection", (socket, request) => {
      seen.push({ url: request.url ?? "", authorization: request.headers.authorization })
      const frame = (channel: number, text: string) => Buffer.concat([Buffer.from([channel]), Buffer.from(text)])
      socket.send(frame(1, "GPU 0: H100"))
      socket.send(frame(2, "a warning"))
      socket.send(frame(3, JSON.stringify({ status: "Success" })))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    return { server, sockets, seen, ca, url: `https://127.0.0.1:${port}` }
  }),
  ({ server, sockets }) =>
    Effect.promise(async () => {
      for (const client of sockets.clients) client.terminate()
      sockets.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }),
)

const kubeConfigFor = (url: string, ca: Buffer | undefined): ClusterAccess =>
  staticAccess(
    {
      server: url,
      insecureSkipTlsVerify: false,
      ...(ca === undefined ? {} : { certificateAuthorityData: ca.toString("base64") }),
    },
    { token },
  )

const options = { qps: 100, burst: 100, requestTimeoutMs: 3_000, execHandshakeTimeoutMs: 3_000 }

const collecting = () => {
  const chunks: Array<Buffer> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk)
      callback()
    },
  })
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") }
}

describe("KubeApi over TLS", () => {
  it.live("trusts the kubeconfig's CA, sends its bearer token and pages with continue tokens", () =>
    Effect.gen(function* () {
      const server = yield* startTlsServer
      const api = yield* KubeApi.make(kubeConfigFor(server.url, server.ca), options)
      const first = yield* api.listNodes({ limit: 2 })
      assert.strictEqual(first.items.length, 2)
      assert.strictEqual(first.resourceVersion, "42")
      assert.strictEqual(first.continueToken, "page-2")
      const second = yield* api.listNodes({ limit: 2, continueToken: "page-2" })
      assert.strictEqual(second.items.length, 1)
      assert.isUndefined(second.continueToken)
      assert.deepStrictEqual(
        server.seen.map((request) => request.url),
        ["/api/v1/nodes?limit=2", "/api/v1/nodes?limit=2&continue=page-2"],
      )
      assert.isTrue(server.seen.every((request) => request.authorization === `Bearer ${token}`))
    }),
  )

  it.live("in a pod: the API server from the environment, the mounted CA and service-account token", () =>
    Effect.gen(function* () {
      const server = yield* startTlsServer
      const directory = mkdtempSync(join(tmpdir(), "gpu-serials-serviceaccount-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
      writeFileSync(join(directory, "ca.crt"), server.ca)
      writeFileSync(join(directory, "token"), `${token}\n`)
      const port = new URL(server.url).port
      const access = inClusterAccess({ KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port }, directory)
      if (typeof access === "string") throw new Error(access)
      assert.strictEqual(access.server, server.url)
      const api = yield* KubeApi.make(access, options)
      const first = yield* api.listNodes({ limit: 2 })
      assert.strictEqual(first.items.length, 2)
      assert.strictEqual(server.seen[0]?.authorization, `Bearer ${token}`)
      assert.strictEqual(
        inClusterAccess({ KUBERNETES_SERVICE_HOST: "127.0.0.1" }, directory),
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set in a pod",
      )
      const v6 = inClusterAccess({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, directory)
      assert.strictEqual(typeof v6 === "string" ? v6 : v6.server, "https://[fd00::1]:443")
    }),
  )

  it.live("an answer that is not JSON fails as a server error without its text", () =>
    Effect.gen(function* () {
      const server = yield* startTlsServer
      const api = yield* KubeApi.make(kubeConfigFor(server.url, server.ca), options)
      const error = yield* Effect.flip(api.listPods("proxied", "app=x", { limit: 2 }))
      assert.strictEqual(error.kind, "server-error")
      assert.strictEqual(error.detail, "the answer is not JSON")
      assert.notInclude(error.message, "login")
    }),
  )

  it.live("refuses a server whose certificate the kubeconfig does not trust", () =>
    Effect.gen(function* () {
      const server = yield* startTlsServer
      const api = yield* KubeApi.make(kubeConfigFor(server.url, undefined), options)
      const error = yield* Effect.flip(api.listNodes({ limit: 2 }))
      assert.strictEqual(error.kind, "connection")
      assert.include(error.detail, "certificate")
      assert.deepStrictEqual(server.seen, [])
    }),
  )

  it.live("runs an exec over wss: stdout and stderr as sent, then the status", () =>
    Effect.gen(function* () {
      const server = yield* startTlsServer
      const api = yield* KubeApi.make(kubeConfigFor(server.url, server.ca), options)
      const stdout = collecting()
      const stderr = collecting()
      const status = yield* Deferred.make<V1Status>()
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* api.exec({
            namespace: "gpu-operator",
            pod: "plugin-a",
            container: "nvidia-device-plugin",
            argv: ["nvidia-smi", "-q", "-x"],
            stdout: stdout.stream,
            stderr: stderr.stream,
            onStatus: (received) => Deferred.doneUnsafe(status, Effect.succeed(received)),
          })
          assert.deepStrictEqual(yield* Deferred.await(status), { status: "Success" })
        }),
      )
      assert.strictEqual(stdout.text(), "GPU 0: H100")
      assert.strictEqual(stderr.text(), "a warning")
      const upgrade = server.seen.at(-1)
      assert.strictEqual(upgrade?.authorization, `Bearer ${token}`)
      assert.strictEqual(
        upgrade?.url,
        "/api/v1/namespaces/gpu-operator/pods/plugin-a/exec?stdout=true&stderr=true&stdin=false&tty=false" +
          "&command=nvidia-smi&command=-q&command=-x&container=nvidia-device-plugin",
      )
    }),
  )

  it("builds one TLS context while the CA read from the kubeconfig stays the same, a new one when it changes", () => {
    const cert = pki.ca
    const contexts = secureContexts()
    const first = contexts.contextOf({ ca: Buffer.from(cert) })
    assert.isDefined(first)
    assert.strictEqual(contexts.contextOf({ ca: Buffer.from(cert) }), first)
    const other = pki.serverCert
    const changed = contexts.contextOf({ ca: other })
    assert.notStrictEqual(changed, first)
    assert.strictEqual(contexts.contextOf({ ca: Buffer.from(other) }), changed)
    assert.isUndefined(contexts.contextOf({ pfx: Buffer.from("bundle") }))
  })
})
