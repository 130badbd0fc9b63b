import { Effect } from "effect"

export interface ProbeAnswer {
  readonly status: number
  readonly contentType: string | null
  readonly body: string
}

/** One request to the health server on 127.0.0.1, the way a kubelet probe or Prometheus would send it. */
export const probe = (port: number, path: string, method = "GET"): Effect.Effect<ProbeAnswer> =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      signal: AbortSignal.timeout(10_000),
    })
    return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() }
  })
