import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Files of a test PKI: a CA, a server certificate for 127.0.0.1 and localhost, and a client certificate. */
export interface TestCertificates {
  readonly dir: string
  readonly caFile: string
  readonly serverCertFile: string
  readonly serverKeyFile: string
  readonly clientCertFile: string
  readonly clientKeyFile: string
  /** PEM contents, for the test server. */
  readonly ca: Buffer
  readonly serverCert: Buffer
  readonly serverKey: Buffer
  readonly remove: () => void
}

const openssl = (dir: string, args: ReadonlyArray<string>): void => {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
}

/** Signs `<name>.csr` with the CA into `<name>.crt`, with the extensions in `<name>.ext`. */
const signed = (dir: string, name: string, subject: string, extensions: string): void => {
  writeFileSync(join(dir, `${name}.ext`), extensions)
  openssl(dir, [
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-subj",
    subject,
    "-out",
    `${name}.csr`,
  ])
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-sha256",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ])
}

/** Generates a fresh PKI with the `openssl` command in a temporary folder; `remove` deletes it. */
export const makeTestCertificates = (): TestCertificates => {
  const dir = mkdtempSync(join(tmpdir(), "gpu-serials-tls-"))
  openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=gpu-serials test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ])
  signed(
    dir,
    "server",
    "/CN=localhost",
    "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  )
  signed(dir, "client", "/CN=gpu-serials", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
  const file = (name: string) => join(dir, name)
  return {
    dir,
    caFile: file("ca.crt"),
    serverCertFile: file("server.crt"),
    serverKeyFile: file("server.key"),
    clientCertFile: file("client.crt"),
    clientKeyFile: file("client.key"),
    ca: readFileSync(file("ca.crt")),
    serverCert: readFileSync(file("server.crt")),
    serverKey: readFileSync(file("server.key")),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
