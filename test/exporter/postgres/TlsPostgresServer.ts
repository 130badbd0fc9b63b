import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TLSSocket } from "node:tls"

/**
 * A server in the test process that speaks the start of the PostgreSQL protocol: it accepts TLS
 * (`SSLRequest`) with a certificate for `localhost` signed by a CA made for the test, and answers
 * the startup message with a login refusal (SQLSTATE 28000) that says whether TLS was used. What a
 * client's sslmode does with the certificate shows in whether it gets that far.
 */
export interface TlsPostgresServer {
  readonly port: number
  /** Path of the CA certificate that signed the server's. */
  readonly caFile: string
  readonly close: () => Promise<void>
}

const SSL_REQUEST = 80877103

const refusal = (message: string): Buffer => {
  const fields = Buffer.concat([
    ...[
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", "28000"],
      ["M", message],
    ].map(([code, text]) => Buffer.from(`${code}${text}\u0000`)),
    Buffer.from([0]),
  ])
  const header = Buffer.alloc(5)
  header.write("E", 0)
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
}

const makeCertificates = (folder: string) => {
  const file = (name: string) => join(folder, name)
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { stdio: "ignore" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=test CA",
  )
  openssl("req", ...ec, "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=localhost")
  writeFileSync(file("san.ext"), "subjectAltName=DNS:localhost\n")
  openssl(
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.crt"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-out",
    file("server.crt"),
    "-days",
    "2",
    "-extfile",
    file("san.ext"),
  )
  return { caFile: file("ca.crt"), cert: readFileSync(file("server.crt")), key: readFileSync(file("server.key")) }
}

export const startTlsPostgresServer = async (): Promise<TlsPostgresServer> => {
  const folder = mkdtempSync(join(tmpdir(), "gpu-serials-pg-tls-"))
  const { caFile, cert, key } = makeCertificates(folder)
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    socket.once("data", (first: Buffer) => {
      if (first.length < 8 || first.readInt32BE(4) !== SSL_REQUEST) {
        socket.end(refusal("plain connection refused by the test server"))
        return
      }
      socket.write("S")
      const secure = new TLSSocket(socket, { isServer: true, cert, key })
      secure.on("error", () => socket.destroy())
      secure.once("data", () => secure.end(refusal("TLS connection reached the test server")))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    caFile,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(folder, { recursive: true, force: true })
    },
  }
}
