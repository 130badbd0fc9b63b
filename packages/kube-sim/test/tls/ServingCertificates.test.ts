import { execFileSync } from "node:child_process"
import { createPrivateKey, X509Certificate } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as tls from "node:tls"
import { describe, expect, it } from "vitest"
import { makeServingCertificates } from "../../src/tls/ServingCertificates.ts"

const now = new Date("2026-12-02T08:00:00Z")
const made = makeServingCertificates({
  hosts: ["127.0.0.1", "localhost", "::1"],
  commonName: "gpu-sim-apiserver",
  now,
  validDays: 365,
})

/** Completes a TLS handshake with a server holding the certificate, as a client trusting only the CA; resolves with the error, if any. */
const handshake = async (servername: string | undefined, ca: string): Promise<Error | undefined> => {
  const server = tls.createServer({ cert: made.serverCertificate, key: made.serverKey }, (socket) => socket.end())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  try {
    return await new Promise<Error | undefined>((resolve) => {
      const socket = tls.connect(
        { host: "127.0.0.1", port, ca, ...(servername === undefined ? {} : { servername }) },
        () => {
          socket.destroy()
          resolve(undefined)
        },
      )
      socket.once("error", resolve)
    })
  } finally {
    server.close()
  }
}

describe("the simulated API server's certificates", () => {
  it("are a CA and a server certificate it signed, for the server's names, valid from before now", () => {
    const ca = new X509Certificate(made.caCertificate)
    const server = new X509Certificate(made.serverCertificate)
    expect(ca.ca).toBe(true)
    expect(server.ca).toBe(false)
    expect(server.checkIssued(ca)).toBe(true)
    expect(server.verify(ca.publicKey)).toBe(true)
    expect(ca.verify(ca.publicKey)).toBe(true)
    expect(server.subject).toBe("CN=gpu-sim-apiserver")
    expect(server.issuer).toBe("CN=gpu-sim-apiserver-ca")
    expect(server.subjectAltName).toBe("IP Address:127.0.0.1, DNS:localhost, IP Address:0:0:0:0:0:0:0:1")
    expect(server.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"])
    expect(server.validFromDate.getTime()).toBeLessThan(now.getTime())
    expect(server.validToDate.getTime()).toBe(now.getTime() + 365 * 24 * 60 * 60 * 1000)
    expect(server.checkPrivateKey(createPrivateKey(made.serverKey))).toBe(true)
  })

  it("pass OpenSSL's verification for a TLS server", async () => {
    const directory = await mkdtemp(join(tmpdir(), "serving-certificates-"))
    try {
      await writeFile(join(directory, "ca.pem"), made.caCertificate)
      await writeFile(join(directory, "server.pem"), made.serverCertificate)
      const verified = execFileSync(
        "openssl",
        ["verify", "-CAfile", "ca.pem", "-purpose", "sslserver", "-verify_ip", "127.0.0.1", "server.pem"],
        { cwd: directory, encoding: "utf8" },
      )
      expect(verified.trim()).toBe("server.pem: OK")
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it("let a client that trusts the CA complete a handshake by IP address and by host name", async () => {
    expect(await handshake(undefined, made.caCertificate)).toBeUndefined()
    expect(await handshake("localhost", made.caCertificate)).toBeUndefined()
  })

  it("are refused by a client that trusts another CA, or asks for a name not in them", async () => {
    const other = makeServingCertificates({ hosts: ["127.0.0.1"], commonName: "other", now, validDays: 1 })
    expect((await handshake(undefined, other.caCertificate))?.message).toMatch(/unable to verify|self-signed|issuer/)
    expect((await handshake("example.com", made.caCertificate))?.message).toContain("example.com")
  })

  it("are fresh on every start: another CA key and serial each time", () => {
    const again = makeServingCertificates({
      hosts: ["127.0.0.1"],
      commonName: "gpu-sim-apiserver",
      now,
      validDays: 365,
    })
    expect(new X509Certificate(again.caCertificate).serialNumber).not.toBe(
      new X509Certificate(made.caCertificate).serialNumber,
    )
    expect(new X509Certificate(again.caCertificate).publicKey.export({ type: "spki", format: "der" })).not.toEqual(
      new X509Certificate(made.caCertificate).publicKey.export({ type: "spki", format: "der" }),
    )
  })
})
