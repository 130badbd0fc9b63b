import { Buffer } from "node:buffer"

/** Where one OTLP signal is sent: the URL requested and the headers sent with it. */
export interface OtlpTarget {
  /** Without userinfo: fetch refuses such a URL, and it would travel in clear in every request line. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/**
 * `<endpoint>/<signalPath>` with the signal path after the endpoint's own path and before its query:
 * `http://h:4318/prefix/?token=x` with `v1/logs` is `http://h:4318/prefix/v1/logs?token=x`.
 */
export const signalUrl = (endpoint: string, signalPath: string): string => {
  if (!URL.canParse(endpoint)) return `${endpoint.replace(/\/+$/, "")}/${signalPath}`
  const url = new URL(endpoint)
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${signalPath}`
  return url.toString()
}

const decoded = (component: string): string => {
  try {
    return decodeURIComponent(component)
  } catch {
    // A stray `%` that starts no escape is meant literally, as curl reads it.
    return component
  }
}

const hasAuthorization = (headers: Readonly<Record<string, string>>): boolean =>
  Object.keys(headers).some((name) => name.toLowerCase() === "authorization")

/**
 * The target of a signal URL: userinfo (`https://user:pass@collector`) is taken out of the URL and
 * sent as `Authorization: Basic base64(user:pass)` after percent-decoding, as curl does; an
 * `Authorization` among the configured headers wins over it.
 */
export const otlpTarget = (signal: string, headers: Readonly<Record<string, string>>): OtlpTarget => {
  if (!URL.canParse(signal)) return { url: signal, headers }
  const url = new URL(signal)
  if (url.username === "" && url.password === "") return { url: signal, headers }
  const credentials = `${decoded(url.username)}:${decoded(url.password)}`
  url.username = ""
  url.password = ""
  return {
    url: url.toString(),
    headers: hasAuthorization(headers)
      ? headers
      : { ...headers, authorization: `Basic ${Buffer.from(credentials, "utf8").toString("base64")}` },
  }
}
