import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { isIP } from "node:net"
import {
  bitString,
  booleanTrue,
  explicit,
  implicitPrimitive,
  namedBits,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  time,
  unsignedInteger,
  utf8String,
} from "./Der.ts"

/** The PEM material of the simulated API server: its CA for clients, its certificate and key for itself. */
export interface ServingCertificates {
  /** The CA certificate clients trust (a kubeconfig's `certificate-authority-data`, decoded). */
  readonly caCertificate: string
  readonly serverCertificate: string
  readonly serverKey: string
}

export interface ServingCertificateRequest {
  /** Names the serving certificate is valid for: host names and IP addresses. */
  readonly hosts: ReadonlyArray<string>
  readonly commonName: string
  readonly now: Date
  /** How long both certificates stay valid from `now`. */
  readonly validDays: number
}

const ecdsaWithSha256 = sequence(objectIdentifier("1.2.840.10045.4.3.2"))

const name = (commonName: string): Buffer =>
  sequence(set(sequence(objectIdentifier("2.5.4.3"), utf8String(commonName))))

const extension = (oid: string, critical: boolean, value: Buffer): Buffer =>
  sequence(objectIdentifier(oid), ...(critical ? [booleanTrue()] : []), octetString(value))

/** The key identifier RFC 5280 §4.2.1.2 suggests: SHA-1 of the public key's bits (here of the whole SPKI). */
const keyIdentifier = (publicKey: KeyObject): Buffer =>
  createHash("sha1")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest()

const ipBytes = (address: string): Buffer => {
  if (isIP(address) === 4) return Buffer.from(address.split(".").map(Number))
  const halves = address.split("::")
  const groupsOf = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":"))
  const head = groupsOf(halves[0])
  const tail = groupsOf(halves[1])
  const groups = [...head, ...Array<string>(8 - head.length - tail.length).fill("0"), ...tail]
  return Buffer.from(groups.flatMap((group) => [Number.parseInt(group, 16) >> 8, Number.parseInt(group, 16) & 0xff]))
}

const subjectAltName = (hosts: ReadonlyArray<string>): Buffer =>
  sequence(
    ...hosts.map((host) =>
      isIP(host) === 0 ? implicitPrimitive(2, Buffer.from(host, "ascii")) : implicitPrimitive(7, ipBytes(host)),
    ),
  )

interface Signed {
  readonly subject: Buffer
  readonly publicKey: KeyObject
  readonly extensions: ReadonlyArray<Buffer>
  readonly issuer: Buffer
  readonly issuerKey: KeyObject
  readonly notBefore: Date
  readonly notAfter: Date
}

/** An X.509 v3 certificate, DER, signed with ECDSA over SHA-256. */
const certificate = (signed: Signed): Buffer => {
  const serial = randomBytes(16)
  serial[0] = (serial[0] ?? 0) & 0x7f
  const toBeSigned = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    ecdsaWithSha256,
    signed.issuer,
    sequence(time(signed.notBefore), time(signed.notAfter)),
    signed.subject,
    signed.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...signed.extensions)),
  )
  return sequence(toBeSigned, ecdsaWithSha256, bitString(sign("sha256", toBeSigned, signed.issuerKey)))
}

const pem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${(der.toString("base64").match(/.{1,64}/g) ?? []).join("\n")}\n-----END ${label}-----\n`

const keyPair = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" })

/**
 * A fresh CA and a serving certificate it signed, both ECDSA P-256, made with Node's crypto alone in a
 * millisecond or two: no CLI to find on the machine, no key or expiry date checked into the tree. The
 * certificates carry what kubectl's (Go's) verifier and OpenSSL insist on: a positive serial, the CA's
 * basic constraints and key usage, the server's names as subject alternative names, server-auth usage.
 */
export const makeServingCertificates = (request: ServingCertificateRequest): ServingCertificates => {
  const notBefore = new Date(request.now.getTime() - 60 * 60 * 1000)
  const notAfter = new Date(request.now.getTime() + request.validDays * 24 * 60 * 60 * 1000)
  const ca = keyPair()
  const caName = name(`${request.commonName}-ca`)
  const caKeyId = keyIdentifier(ca.publicKey)
  const caDer = certificate({
    subject: caName,
    publicKey: ca.publicKey,
    issuer: caName,
    issuerKey: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension("2.5.29.19", true, sequence(booleanTrue())),
      extension("2.5.29.15", true, namedBits([5, 6])),
      extension("2.5.29.14", false, octetString(caKeyId)),
    ],
  })
  const server = keyPair()
  const serverDer = certificate({
    subject: name(request.commonName),
    publicKey: server.publicKey,
    issuer: caName,
    issuerKey: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension("2.5.29.19", true, sequence()),
      extension("2.5.29.15", true, namedBits([0])),
      extension("2.5.29.37", false, sequence(objectIdentifier("1.3.6.1.5.5.7.3.1"))),
      extension("2.5.29.35", false, sequence(implicitPrimitive(0, caKeyId))),
      extension("2.5.29.17", false, subjectAltName(request.hosts)),
    ],
  })
  return {
    caCertificate: pem("CERTIFICATE", caDer),
    serverCertificate: pem("CERTIFICATE", serverDer),
    serverKey: server.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  }
}
