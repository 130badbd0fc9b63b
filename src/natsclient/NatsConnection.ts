import { readFile } from "node:fs/promises"
import {
  type Authenticator,
  AuthorizationError,
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { redactUrlList, redactUrlsIn } from "../log/UrlRedaction.ts"
import { NatsConnectError } from "./NatsConnectError.ts"
import type { NatsAuth, NatsConnectionConfig } from "./NatsConnectionSettings.ts"

export type { NatsConnectionConfig } from "./NatsConnectionSettings.ts"

/** How long one connection attempt, a credentials read or a drain may take. */
export const connectTimeout = Duration.seconds(10)

/** Reconnection after a lost connection: forever, 1 s apart with up to 1 s of jitter (2 s over TLS). */
const reconnect = {
  maxReconnectAttempts: -1,
  reconnectTimeWait: 1_000,
  reconnectJitter: 1_000,
  reconnectJitterTLS: 2_000,
} as const

/** A client library's message, which may quote a server URL, with its secrets redacted. */
const reason = (cause: unknown): string => redactUrlsIn(cause instanceof Error ? cause.message : String(cause))

/** The servers as messages name them: redacted, since a URL may carry credentials or a token. */
export const serverList = (config: Pick<NatsConnectionConfig, "servers">): string =>
  redactUrlList(config.servers.join(","))

const authenticator = Effect.fnUntraced(function* (
  auth: NatsAuth,
  servers: string,
): Effect.fn.Return<Authenticator | undefined, NatsConnectError> {
  switch (auth.kind) {
    case "none":
      return undefined
    case "token":
      return tokenAuthenticator(auth.token)
    case "userPassword":
      return usernamePasswordAuthenticator(auth.user, auth.password)
    case "nkey":
      return nkeyAuthenticator(new TextEncoder().encode(auth.seed))
    case "creds": {
      const creds = yield* Effect.tryPromise({
        try: (signal) => readFile(auth.credsFile, { signal }),
        catch: (cause) =>
          new NatsConnectError({
            servers,
            message: `cannot read NATS credentials file ${auth.credsFile}: ${reason(cause)}`,
          }),
      }).pipe(
        Effect.timeout(connectTimeout),
        Effect.catchTag("TimeoutError", () =>
          Effect.fail(
            new NatsConnectError({ servers, message: `reading NATS credentials file ${auth.credsFile} timed out` }),
          ),
        ),
      )
      return credsAuthenticator(new Uint8Array(creds))
    }
  }
})

/** How a connection is used, where that changes its options. */
export interface ConnectionUse {
  /**
   * Whether each request captures a stack for its possible error (nats.js `noAsyncTraces` when false): a
   * connection making many requests a second (a hub writing its state) spends a tenth of its CPU on them.
   */
  readonly asyncTraces?: boolean
}

/**
 * The nats.js options of a connection named `name`: servers, TLS files, one authenticator, and
 * reconnection forever with backoff and jitter once connected.
 */
export const connectionOptions = Effect.fnUntraced(function* (
  config: NatsConnectionConfig,
  name: string,
  use: ConnectionUse = {},
): Effect.fn.Return<NodeConnectionOptions, NatsConnectError> {
  const auth = yield* authenticator(config.auth, serverList(config))
  const tls = config.tls
  return {
    servers: [...config.servers],
    name,
    ...reconnect,
    timeout: Duration.toMillis(connectTimeout),
    ...(use.asyncTraces === false ? { noAsyncTraces: true } : {}),
    ...(auth === undefined ? {} : { authenticator: auth }),
    ...(tls === undefined
      ? {}
      : {
          tls: {
            ...(tls.caFile === undefined ? {} : { caFile: tls.caFile }),
            ...(tls.certFile === undefined ? {} : { certFile: tls.certFile }),
            ...(tls.keyFile === undefined ? {} : { keyFile: tls.keyFile }),
          },
        }),
  }
})

/** Drains a connection (pending messages flushed, subscriptions finished), closing it if that takes too long. */
export const drain = (connection: NatsConnection): Effect.Effect<void> =>
  connection.isClosed()
    ? Effect.void
    : Effect.tryPromise(() => connection.drain()).pipe(
        Effect.timeout(connectTimeout),
        Effect.catch(() => Effect.tryPromise(() => connection.close()).pipe(Effect.ignore)),
      )

/** One attempt to connect, under `connectTimeout`; the connection is not tied to any scope. */
export const open = Effect.fnUntraced(function* (
  config: NatsConnectionConfig,
  name: string,
  use: ConnectionUse = {},
): Effect.fn.Return<NatsConnection, NatsConnectError> {
  const options = yield* connectionOptions(config, name, use)
  const servers = serverList(config)
  // A connection that arrives after the caller gave up (interrupted, timed out) is closed, never leaked.
  return yield* Effect.callback<NatsConnection, NatsConnectError>((resume) => {
    let abandoned = false
    connect(options).then(
      (connection) => {
        if (abandoned) void connection.close()
        else resume(Effect.succeed(connection))
      },
      (cause: unknown) =>
        resume(
          Effect.fail(
            cause instanceof AuthorizationError
              ? new NatsConnectError({
                  servers,
                  message: `cannot connect to NATS at ${servers}: authorization refused by the server (${reason(cause)})`,
                  refused: true,
                })
              : new NatsConnectError({ servers, message: `cannot connect to NATS at ${servers}: ${reason(cause)}` }),
          ),
        ),
    )
    return Effect.sync(() => {
      abandoned = true
    })
  }).pipe(
    Effect.timeout(Duration.sum(connectTimeout, Duration.seconds(1))),
    Effect.catchTag("TimeoutError", () =>
      Effect.fail(
        new NatsConnectError({
          servers,
          message: `no connection to NATS at ${servers} within ${Duration.format(connectTimeout)}`,
        }),
      ),
    ),
  )
})

/** A connection for the life of the scope, drained when the scope closes. */
export const scoped = (
  config: NatsConnectionConfig,
  name: string,
  use: ConnectionUse = {},
): Effect.Effect<NatsConnection, NatsConnectError, Scope.Scope> => Effect.acquireRelease(open(config, name, use), drain)
