import * as http from "node:http"
import * as https from "node:https"

/** What a request to the simulated API server needs of the cluster: its address, token and CA. */
export interface ApiServerAddress {
  readonly url: string
  readonly token: string
  readonly certificateAuthority: string | undefined
}

export interface ApiRequestInit {
  readonly method?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** Gives up after this long. Default 10 s. */
  readonly timeoutMs?: number
}

export interface ApiResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/**
 * One request to the simulated API server as the user of its kubeconfig (its bearer token), trusting the
 * cluster's CA over HTTPS: what a raw `fetch` cannot do without a dispatcher of its own.
 */
export const requestApi = (cluster: ApiServerAddress, path: string, init: ApiRequestInit = {}): Promise<ApiResponse> =>
  new Promise<ApiResponse>((resolve, reject) => {
    const url = new URL(cluster.url + path)
    const options: https.RequestOptions = {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${cluster.token}`, ...init.headers },
      timeout: init.timeoutMs ?? 10_000,
      ...(cluster.certificateAuthority === undefined ? {} : { ca: cluster.certificateAuthority }),
    }
    const send = url.protocol === "https:" ? https.request : http.request
    const request = send(url, options, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      )
      response.on("error", reject)
    })
    request.on("timeout", () => request.destroy(new Error(`${options.method} ${path}: no answer in time`)))
    request.on("error", reject)
    request.end(init.body)
  })
