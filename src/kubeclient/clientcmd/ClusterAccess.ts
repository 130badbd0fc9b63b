import { readFile } from "node:fs/promises"
import * as http from "node:http"
import * as https from "node:https"
import { isIPv6 } from "node:net"
import type * as tls from "node:tls"
import type { KubeconfigCluster, KubeconfigUser } from "./Kubeconfig.ts"

/** Request options as the credentials fill them, with the TLS context they are used with. */
export type KubeRequestOptions = https.RequestOptions & { secureContext?: tls.SecureContext }

/**
 * How requests reach one cluster's API server: its URL, and what each request carries (TLS material,
 * `Authorization`, impersonation, the agent). Filled again for every request, so rotated files are picked up.
 */
export interface ClusterAccess {
  /** The API server URL, without a trailing slash. */
  readonly server: string
  readonly applyTo: (options: KubeRequestOptions) => Promise<void>
}

/** Files holding credentials are read again after this long, as client-go re-reads a service-account token. */
export const fileRefreshMs = 60_000

/** The contents of a file, read at first use and again once older than `fileRefreshMs`. */
const refreshedFile = (path: string) => {
  let contents: Buffer | undefined
  let readAtMs = 0
  return async (): Promise<Buffer> => {
    if (contents === undefined || Date.now() - readAtMs >= fileRefreshMs) {
      contents = await readFile(path)
      readAtMs = Date.now()
    }
    return contents
  }
}

/** A file path, or the base64 data written in its place, as a buffer when needed. */
const material = (path: string | undefined, data: string | undefined): (() => Promise<Buffer>) | undefined => {
  if (path !== undefined) return refreshedFile(path)
  if (data !== undefined) {
    const decoded = Buffer.from(data, "base64")
    return () => Promise.resolve(decoded)
  }
  return undefined
}

/**
 * An idle connection is closed after this long: well under the API server's own idle timeout (90 s in
 * kube-apiserver) and the 20 to 60 s of the load balancers usually in front of it, so a request is not
 * sent on a connection the other end is closing.
 */
export const idleConnectionMs = 15_000

/**
 * One agent per cluster, as client-node keeps one. It keeps connections alive, so a REST call and the next
 * exec's WebSocket upgrade take an idle connection instead of a new one, and it keeps the TLS sessions of
 * the server (TLS 1.3 tickets), so a new connection resumes one instead of a full handshake. Both are keyed
 * by the server and the TLS material (CA, client certificate, server name): a changed CA neither reuses a
 * connection nor resumes a session made under the old one.
 */
const agentFor = (server: string): http.Agent =>
  server.startsWith("https:")
    ? new https.Agent({ keepAlive: true, timeout: idleConnectionMs })
    : new http.Agent({ keepAlive: true, timeout: idleConnectionMs })

/**
 * Access with the static credentials of a kubeconfig: a bearer token (or a token file), a client
 * certificate, a user name and password, the cluster's CA, `insecure-skip-tls-verify`, `tls-server-name`
 * and `as`. Plugins and proxies are not handled here (`needsClientLibrary`).
 */
export const staticAccess = (cluster: KubeconfigCluster, user: KubeconfigUser): ClusterAccess => {
  const ca = material(cluster.certificateAuthority, cluster.certificateAuthorityData)
  const cert = material(user.clientCertificate, user.clientCertificateData)
  const key = material(user.clientKey, user.clientKeyData)
  const tokenFile = user.tokenFile === undefined ? undefined : refreshedFile(user.tokenFile)
  const agent = agentFor(cluster.server)
  return {
    server: cluster.server,
    applyTo: async (options) => {
      const headers: http.OutgoingHttpHeaders = { ...(options.headers as http.OutgoingHttpHeaders | undefined) }
      const token = user.token ?? (tokenFile === undefined ? undefined : (await tokenFile()).toString("utf8").trim())
      if (token !== undefined && token !== "") headers.Authorization = `Bearer ${token}`
      if (user.impersonate !== undefined) headers["Impersonate-User"] = user.impersonate
      options.headers = headers
      if (user.username !== undefined) options.auth = `${user.username}:${user.password ?? ""}`
      if (ca !== undefined) options.ca = await ca()
      if (cert !== undefined) options.cert = await cert()
      if (key !== undefined) options.key = await key()
      if (cluster.insecureSkipTlsVerify) options.rejectUnauthorized = false
      if (cluster.tlsServerName !== undefined) options.servername = cluster.tlsServerName
      options.agent = agent
    },
  }
}

const serviceAccountDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

/** Where a pod's service account token is mounted: its presence means the process runs in a pod. */
export const serviceAccountTokenPath = `${serviceAccountDirectory}/token`

/**
 * Access as the pod's service account, as client-go's `InClusterConfig`: the API server from
 * `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` over HTTPS, the mounted CA, and the mounted
 * token, read again every minute (the kubelet rotates it). Fails with a sentence when the variables are unset.
 */
export const inClusterAccess = (
  environment: Readonly<Record<string, string | undefined>>,
  directory = serviceAccountDirectory,
): ClusterAccess | string => {
  const host = environment.KUBERNETES_SERVICE_HOST ?? ""
  const port = environment.KUBERNETES_SERVICE_PORT ?? ""
  if (host === "" || port === "") {
    return "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set in a pod"
  }
  return staticAccess(
    {
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      certificateAuthority: `${directory}/ca.crt`,
      insecureSkipTlsVerify: false,
    },
    { tokenFile: `${directory}/token` },
  )
}
