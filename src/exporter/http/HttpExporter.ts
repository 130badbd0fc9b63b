import { readFile } from "node:fs/promises"
import * as http from "node:http"
import * as https from "node:https"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { type Configured, configuredBy } from "../../config/ComponentSettings.ts"
import type { TlsFiles } from "../../config/TlsSettings.ts"
import { defectMessage } from "../../log/ShortMessage.ts"
import type { ExporterFactory } from "../../pipeline/Exporter.ts"
import * as QueuedExporter from "../exporterhelper/QueuedExporter.ts"
import { type HttpExporterConfig, httpSettings } from "./HttpConfig.ts"
import * as HttpSink from "./HttpSink.ts"

/** The PEM files of the TLS settings, read once at start. */
const readTlsFiles = (id: string, tls: TlsFiles | undefined) =>
  Effect.gen(function* () {
    const read = (what: string, path: string | undefined) =>
      path === undefined
        ? Effect.succeed(undefined)
        : Effect.tryPromise({
            try: () => readFile(path),
            catch: (cause) =>
              new ComponentStartError({
                component: id,
                message: `cannot read the HTTP TLS ${what} ${path}: ${defectMessage(cause)}`,
              }),
          })
    const ca = yield* read("CA", tls?.caFile)
    const cert = yield* read("certificate", tls?.certFile)
    const key = yield* read("key", tls?.keyFile)
    return {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
    }
  })

/**
 * The `http` exporter factory: each batch of GPU events POSTed as one request (a JSON array of
 * `gpu-serials/v1` records, or NDJSON) through the common bounded, retried queue, over one keep-alive
 * agent closed with the exporter. A write's deadline covers at least one request's timeout.
 */
export const factory: ExporterFactory<HttpExporterConfig> & Configured<HttpExporterConfig> = {
  kind: "exporter",
  type: "http",
  ...configuredBy(httpSettings),
  create: (config, settings) =>
    Effect.gen(function* () {
      if (!URL.canParse(config.endpoint)) {
        return yield* new ComponentStartError({
          component: settings.id,
          message: "HTTP endpoint must be a valid HTTP/HTTPS URL",
        })
      }
      const url = new URL(config.endpoint)
      const tls = yield* readTlsFiles(settings.id, config.tls)
      const agent = yield* Effect.acquireRelease(
        Effect.sync(() =>
          url.protocol === "https:"
            ? new https.Agent({ keepAlive: true, ...tls })
            : new http.Agent({ keepAlive: true }),
        ),
        (agent) => Effect.sync(() => agent.destroy()),
      )
      const timeout = Duration.millis(config.timeoutMs)
      const sink = HttpSink.make({
        url,
        agent,
        timeout,
        format: config.format,
        compression: config.compression,
        headers: config.headers,
        serviceVersion: settings.serviceVersion,
        ...(config.authToken === undefined ? {} : { authToken: config.authToken }),
      })
      return yield* QueuedExporter.make({
        id: settings.id,
        sink,
        settings: { ...config.queue, writeTimeout: Duration.max(config.queue.writeTimeout, timeout) },
      })
    }),
}
