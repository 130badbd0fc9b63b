import * as http from "node:http"
import * as https from "node:https"
import * as tls from "node:tls"
import { shortMessage } from "../../log/ShortMessage.ts"
import type { ClusterAccess, KubeRequestOptions } from "../clientcmd/ClusterAccess.ts"
import { BodyBuffer } from "./BodyBuffers.ts"
import { KubeApiError, kindOfStatus, statusMessageOf } from "./KubeApiError.ts"

/** One request to the API server: a path with its query, and a JSON body for writes. */
export interface KubeRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH"
  /** Path below the server URL, query included, e.g. `/api/v1/nodes?limit=500`. */
  readonly path: string
  readonly contentType?: string
  readonly body?: string
}

export type { KubeRequestOptions } from "../clientcmd/ClusterAccess.ts"

/**
 * The API server as plain HTTP(S): every request carries the authentication and TLS settings of the
 * cluster's access (bearer token, client certificate, CA, agent), filled again for each request so a rotated
 * service-account token is picked up. Nothing is kept between requests but the access's agent and one
 * TLS context, built again only when the CA or client certificate changes.
 */
export interface KubeTransport {
  /** The WebSocket URL of a path, `wss://…` for an `https` server. */
  readonly socketUrl: (path: string) => string
  /** The request options (headers, TLS, agent) the access gives, for a WebSocket upgrade. */
  readonly requestOptions: () => Promise<KubeRequestOptions>
  /**
   * Sends the request and resolves with the response once its headers arrived. Aborting `signal` before
   * then fails the request; afterwards the response is the caller's to consume or destroy.
   */
  readonly open: (request: KubeRequest, signal: AbortSignal) => Promise<http.IncomingMessage>
}

export const makeKubeTransport = (access: ClusterAccess): KubeTransport => {
  const { server } = access
  const contexts = secureContexts()
  const requestOptions = async (): Promise<KubeRequestOptions> => {
    const options: KubeRequestOptions = {}
    await access.applyTo(options)
    if (server.startsWith("https:")) {
      const context = contexts.contextOf(options)
      if (context !== undefined) options.secureContext = context
    }
    return options
  }

  const open = async (request: KubeRequest, signal: AbortSignal): Promise<http.IncomingMessage> => {
    signal.throwIfAborted()
    const options = await requestOptions()
    signal.throwIfAborted()
    const headers: http.OutgoingHttpHeaders = {
      ...(options.headers as http.OutgoingHttpHeaders | undefined),
      Accept: "application/json",
    }
    if (request.body !== undefined) {
      headers["Content-Type"] = request.contentType ?? "application/json"
      headers["Content-Length"] = Buffer.byteLength(request.body)
    }
    const url = new URL(server + request.path)
    const send = url.protocol === "https:" ? https.request : http.request
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const onAbort = () => outgoing.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"))
      const outgoing = send(url, { ...options, method: request.method, headers }, (response) => {
        signal.removeEventListener("abort", onAbort)
        resolve(response)
      })
      outgoing.on("error", (error) => {
        signal.removeEventListener("abort", onAbort)
        reject(error)
      })
      signal.addEventListener("abort", onAbort, { once: true })
      outgoing.end(request.body)
    })
  }

  return { socketUrl: (path) => server.replace(/^http/, "ws") + path, requestOptions, open }
}

type TlsMaterial = string | Buffer | Array<string | Buffer> | undefined

const sameMaterial = (left: TlsMaterial, right: TlsMaterial): boolean => {
  if (left === right) return true
  if (Buffer.isBuffer(left) && Buffer.isBuffer(right)) return left.equals(right)
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((part, index) => sameMaterial(part, right[index]))
  }
  return false
}

interface CachedContext {
  readonly ca: TlsMaterial
  readonly cert: TlsMaterial
  readonly key: TlsMaterial
  readonly context: tls.SecureContext
}

/**
 * One TLS context for as long as the kubeconfig's CA and client certificate stay the same: building it
 * (parsing the certificates) for every connection would cost more than the rest of an exec's upgrade.
 * Options it cannot express (a PFX bundle, a passphrase) leave the context to each connection.
 */
export const secureContexts = () => {
  let cached: CachedContext | undefined
  return {
    contextOf: (options: https.RequestOptions): tls.SecureContext | undefined => {
      if (options.pfx !== undefined || options.passphrase !== undefined) return undefined
      const ca = options.ca as TlsMaterial
      const cert = options.cert as TlsMaterial
      const key = options.key as TlsMaterial
      if (
        cached === undefined ||
        !sameMaterial(cached.ca, ca) ||
        !sameMaterial(cached.cert, cert) ||
        !sameMaterial(cached.key, key)
      ) {
        cached = {
          ca,
          cert,
          key,
          context: tls.createSecureContext({
            ...(ca === undefined ? {} : { ca }),
            ...(cert === undefined ? {} : { cert }),
            ...(key === undefined ? {} : { key }),
          }),
        }
      }
      return cached.context
    },
  }
}

/** A refused request's Status body is read up to this size for its message. */
const statusBodyBytes = 16 * 1024

/** A Content-Length up to this size is room made in advance; a larger one is believed only as the bytes arrive. */
const reservedBodyBytes = 64 * 1024 * 1024

/** Stands for a settled read's handlers on its response: an error after it (a late reset) has a listener, and holds nothing. */
const afterSettled = (): void => undefined

/**
 * The whole body of a response, or the failure its status means (the Status message as detail). Aborting
 * `signal` destroys the response and fails the read. `onChunk` sees each chunk of an accepted answer as it
 * arrives. The body is gathered in `into` and is a view of it: read it out before `into` is used again.
 * Once settled, the read takes its handlers off the response and the signal: a keep-alive socket holds its
 * first request and that request's response as long as it lives, and through its handlers they would
 * hold `into` (a list page's buffer, megabytes) and `onChunk`.
 */
export const readBody = (
  operation: string,
  response: http.IncomingMessage,
  signal: AbortSignal,
  onChunk?: (chunk: Buffer) => void,
  into: BodyBuffer = new BodyBuffer(),
): Promise<Buffer> =>
  new Promise<Buffer>((resolve, reject) => {
    const status = response.statusCode ?? 0
    const refused = status < 200 || status > 299
    const onAbort = () => response.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"))
    const onData = (chunk: Buffer) => {
      if (refused && into.length >= statusBodyBytes) return
      into.append(chunk)
      if (!refused) onChunk?.(chunk)
    }
    const onEnd = () => {
      settle()
      const body = into.bytes
      if (refused) {
        reject(refusal(operation, status, body.toString("utf8", 0, Math.min(body.length, statusBodyBytes))))
      } else {
        resolve(body)
      }
    }
    const onError = (error: Error) => {
      settle()
      reject(error)
    }
    const onClose = () => {
      if (!response.complete) {
        settle()
        reject(new Error("the response was cut off"))
      }
    }
    const settle = () => {
      signal.removeEventListener("abort", onAbort)
      response.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose)
      response.on("error", afterSettled)
    }
    if (signal.aborted) {
      onAbort()
    } else {
      signal.addEventListener("abort", onAbort, { once: true })
    }
    const announced = Number(response.headers["content-length"])
    if (!refused && Number.isSafeInteger(announced) && announced > 0 && announced <= reservedBodyBytes) {
      into.reserve(announced)
    }
    response.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose)
  })

/** The failure an HTTP status and its Status body mean. */
export const refusal = (operation: string, status: number, body: string): KubeApiError =>
  new KubeApiError({
    operation,
    kind: kindOfStatus(status),
    status,
    detail: shortMessage(statusMessageOf(body) ?? `HTTP ${status}`),
  })

/** `?a=1&b=2` of the given parameters, leaving out the undefined ones; empty when none is left. */
export const queryOf = (parameters: Readonly<Record<string, string | number | boolean | undefined>>): string => {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(parameters)) {
    if (value !== undefined) {
      query.set(key, String(value))
    }
  }
  const text = query.toString()
  return text === "" ? "" : `?${text}`
}
