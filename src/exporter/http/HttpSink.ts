import * as http from "node:http"
import * as https from "node:https"
import { promisify } from "node:util"
import { gzip } from "node:zlib"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { type Sink, SinkError } from "../exporterhelper/Sink.ts"
import { networkFailure, statusFailure } from "./HttpFailure.ts"
import { batchRequest, type HttpRequestOptions } from "./HttpRequest.ts"

const gzipAsync = promisify(gzip)

export interface HttpSinkOptions extends Omit<HttpRequestOptions, "gzip"> {
  /** The endpoint; userinfo in it is sent as Basic authentication unless an Authorization header is set. */
  readonly url: URL
  readonly compression: "gzip" | "none"
  /** Deadline of one request, answer included. */
  readonly timeout: Duration.Duration
  /** The keep-alive agent requests go through (an `https.Agent` for an https:// endpoint). */
  readonly agent: http.Agent
}

interface Answer {
  readonly status: number
  readonly retryAfter: string | undefined
}

/**
 * POSTs each batch to the endpoint in one request. 2xx is success; 408, 429, 5xx, timeouts and requests
 * that got no answer fail as retryable (with the endpoint's `Retry-After`), every other status as
 * permanent. Failure messages name the status or the client's error, never the body or a header value.
 */
export const make = (options: HttpSinkOptions): Sink => {
  const transport = options.url.protocol === "https:" ? https : http
  const requestOptions = { ...options, gzip: options.compression === "gzip" }

  const encode = (text: string): Effect.Effect<Buffer, SinkError> =>
    options.compression === "none"
      ? Effect.succeed(Buffer.from(text, "utf8"))
      : Effect.tryPromise({
          try: () => gzipAsync(text),
          catch: (cause) =>
            new SinkError({ message: `HTTP body could not be compressed: ${String(cause)}`, retryable: false }),
        })

  const post = (headers: Readonly<Record<string, string>>, body: Buffer): Effect.Effect<Answer, SinkError> =>
    Effect.callback<Answer, SinkError>((resume) => {
      let request: http.ClientRequest
      try {
        request = transport.request(options.url, {
          method: "POST",
          agent: options.agent,
          headers: { ...headers, "content-length": String(body.length) },
        })
      } catch (cause) {
        resume(Effect.fail(networkFailure(cause)))
        return
      }
      request.on("response", (response) => {
        const retryAfter = response.headers["retry-after"]
        // The answer's body is read and dropped, so the connection can carry the next request.
        response.resume()
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, retryAfter })))
        response.on("error", (cause) => resume(Effect.fail(networkFailure(cause))))
      })
      request.on("error", (cause) => resume(Effect.fail(networkFailure(cause))))
      request.end(body)
      return Effect.sync(() => request.destroy())
    }).pipe(
      Effect.timeout(options.timeout),
      Effect.catchTag("TimeoutError", () =>
        Effect.fail(
          new SinkError({
            message: `HTTP request timed out after ${Duration.format(options.timeout)}`,
            retryable: true,
          }),
        ),
      ),
    )

  const write = (events: ReadonlyArray<InventoryEvent>): Effect.Effect<void, SinkError> =>
    Effect.gen(function* () {
      const request = batchRequest(events, yield* Clock.currentTimeMillis, requestOptions)
      const answer = yield* post(request.headers, yield* encode(request.body))
      if (answer.status < 200 || answer.status > 299) {
        return yield* statusFailure(answer.status, answer.retryAfter, yield* Clock.currentTimeMillis)
      }
    })

  return { write }
}
