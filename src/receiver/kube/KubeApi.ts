import { Readable, type Writable } from "node:stream"
import {
  type ConfigurationOptions,
  CoreV1Api,
  Exec,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  PatchStrategy,
  setHeaderOptions,
  type V1Status,
  Watch,
} from "@kubernetes/client-node"
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js"
import { Cause, Context, Duration, Effect, Layer, Queue, type Scope } from "effect"
import type WebSocket from "ws"
import { openExecSocket } from "./ExecHandshake.ts"
import { KubeApiError, kubeApiErrorOf } from "./KubeApiError.ts"
import { type KubeConfigError, type KubeConfigOrigin, loadKubeConfig } from "./KubeConfigSource.ts"
import type { NodeLabelPatch } from "./NodeLabelPatch.ts"
import * as TokenBucket from "./TokenBucket.ts"

/** One page of a list call. */
export interface ListPage {
  /** Continue token of the previous page; absent for the first. */
  readonly continueToken?: string
  readonly limit: number
}

/** A listed page: its raw objects, the list's resourceVersion and the token of the next page, if any. */
export interface ListedPage {
  readonly items: ReadonlyArray<unknown>
  readonly resourceVersion: string
  readonly continueToken: string | undefined
}

/** One event of a watch as the API server sent it; `object` is checked by whoever reads it. */
export interface WatchEvent {
  readonly type: string
  readonly object: unknown
}

export interface WatchRequest {
  /** Collection path, e.g. `/api/v1/namespaces/gpu-operator/pods` or `/api/v1/nodes`. */
  readonly path: string
  readonly labelSelector?: string
  /** Resume after this resourceVersion. */
  readonly resourceVersion: string
  /** Server-side lifetime of the watch. */
  readonly timeoutSeconds: number
}

/**
 * A watch's events in the order they arrived. Taking fails with `Done` when the watch ended normally (the
 * server closed it, or client-node's fixed inactivity timer cut it) and with a `KubeApiError` when it broke.
 */
export type WatchEvents = Queue.Dequeue<WatchEvent, KubeApiError | Cause.Done>

/** A command to run in a container over the WebSocket exec subresource; argv is passed as is, never to a shell. */
export interface ExecCall {
  readonly namespace: string
  readonly pod: string
  readonly container: string
  readonly argv: ReadonlyArray<string>
  readonly stdout: Writable
  readonly stderr: Writable
  /** Called once with the status frame: `Success`, or `Failure` with the exit code among its causes. */
  readonly onStatus: (status: V1Status) => void
}

export interface KubeApiOptions {
  /** Kubeconfig path(s); empty: in-cluster, then `~/.kube/config`. */
  readonly kubeconfig: string
  readonly qps: number
  readonly burst: number
  /** Deadline of each REST call (one page of a list). */
  readonly requestTimeoutMs: number
  /** Deadline of the WebSocket upgrade of an exec. */
  readonly execHandshakeTimeoutMs: number
}

export const defaultRequestTimeoutMs = 30_000
export const defaultExecHandshakeTimeoutMs = 10_000

/** Slack between client-node's own abort and the Effect deadline above it. */
const deadlineSlackMs = 1_000

/**
 * The Kubernetes API as the receiver uses it: pages of pods and nodes, watches, exec sessions and patches
 * of node labels. Every
 * call takes a token from one QPS/BURST bucket first and has a deadline; watches and exec sockets are
 * closed when the scope that opened them closes.
 */
export class KubeApi extends Context.Service<
  KubeApi,
  {
    /** The kubeconfig file(s) read, `in-cluster`, or `given` for a configuration handed over by the caller. */
    readonly origin: KubeConfigOrigin
    readonly listPods: (
      namespace: string,
      labelSelector: string,
      page: ListPage,
    ) => Effect.Effect<ListedPage, KubeApiError>
    readonly listNodes: (page: ListPage) => Effect.Effect<ListedPage, KubeApiError>
    readonly watch: (request: WatchRequest) => Effect.Effect<WatchEvents, KubeApiError, Scope.Scope>
    /**
     * Merges `labels` into the node's `metadata.labels` (a JSON merge patch without resourceVersion, so it
     * never conflicts): a value sets a label, `null` removes it, other labels stay as they are. Answers
     * the node's resourceVersion after the patch.
     */
    readonly patchNodeLabels: (node: string, labels: NodeLabelPatch) => Effect.Effect<string, KubeApiError>
    /** Opens the exec session; the socket is terminated when the scope closes. */
    readonly exec: (call: ExecCall) => Effect.Effect<WebSocket, KubeApiError, Scope.Scope>
  }
>()("gpu-serials/receiver/kube/KubeApi") {
  /** The API of the cluster a kubeconfig (or the pod's service account) names. */
  static readonly layer = (options: KubeApiOptions): Layer.Layer<KubeApi, KubeConfigError> =>
    Layer.effect(
      KubeApi,
      Effect.gen(function* () {
        const { config, origin } = yield* loadKubeConfig(options.kubeconfig)
        return yield* KubeApi.make(config, options, origin)
      }),
    )

  static readonly make = (
    config: KubeConfig,
    options: Omit<KubeApiOptions, "kubeconfig">,
    origin: KubeConfigOrigin = "given",
  ): Effect.Effect<KubeApi["Service"]> =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make({ qps: options.qps, burst: options.burst })
      const core = config.makeApiClient(CoreV1Api)
      const watcher = new Watch(config)
      const requestTimeout = Duration.millis(options.requestTimeoutMs + deadlineSlackMs)
      const handshakeTimeout = Duration.millis(options.execHandshakeTimeoutMs + deadlineSlackMs)

      const call = <A>(
        operation: string,
        request: (options: ConfigurationOptions) => Promise<A>,
      ): Effect.Effect<A, KubeApiError> =>
        bucket.take.pipe(
          Effect.andThen(
            Effect.tryPromise({
              try: (signal) =>
                request({
                  middleware: [withSignal(AbortSignal.any([signal, AbortSignal.timeout(options.requestTimeoutMs)]))],
                  middlewareMergeStrategy: "append",
                }),
              catch: (cause) => kubeApiErrorOf(operation, cause),
            }).pipe(Effect.timeout(requestTimeout)),
          ),
          Effect.catchTag("TimeoutError", () => Effect.fail(timedOut(operation))),
        )

      const listPods = (namespace: string, labelSelector: string, page: ListPage) =>
        call("list pods", (requestOptions) =>
          core.listNamespacedPod(
            {
              namespace,
              labelSelector,
              limit: page.limit,
              ...(page.continueToken === undefined ? {} : { _continue: page.continueToken }),
            },
            requestOptions,
          ),
        ).pipe(Effect.map(listedPage))

      const listNodes = (page: ListPage) =>
        call("list nodes", (requestOptions) =>
          core.listNode(
            { limit: page.limit, ...(page.continueToken === undefined ? {} : { _continue: page.continueToken }) },
            requestOptions,
          ),
        ).pipe(Effect.map(listedPage))

      const patchNodeLabels = (node: string, labels: NodeLabelPatch) =>
        call("patch node", (requestOptions) =>
          core.patchNode(
            { name: node, body: { metadata: { labels } } },
            setHeaderOptions("Content-Type", PatchStrategy.MergePatch, requestOptions),
          ),
        ).pipe(Effect.map((patched) => patched.metadata?.resourceVersion ?? ""))

      const watch = Effect.fnUntraced(function* (
        request: WatchRequest,
      ): Effect.fn.Return<WatchEvents, KubeApiError, Scope.Scope> {
        const operation = `watch ${request.path}`
        yield* bucket.take
        const events = yield* Queue.unbounded<WatchEvent, KubeApiError | Cause.Done>()
        const query: Record<string, string | number | boolean> = {
          resourceVersion: request.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: request.timeoutSeconds,
        }
        if (request.labelSelector !== undefined) {
          query.labelSelector = request.labelSelector
        }
        const controller = yield* Effect.tryPromise({
          try: (signal) =>
            watcher
              .watch(
                request.path,
                query,
                (type: string, object: unknown) => {
                  Queue.offerUnsafe(events, { type, object })
                },
                (error: unknown) => {
                  if (error === null || error === undefined || isInactivityTimeout(error)) {
                    Queue.endUnsafe(events)
                  } else {
                    Queue.failCauseUnsafe(events, Cause.fail(kubeApiErrorOf(operation, error)))
                  }
                },
              )
              .then((opened) => abortWith(signal, opened)),
          catch: (cause) => kubeApiErrorOf(operation, cause),
        }).pipe(
          Effect.timeout(requestTimeout),
          Effect.catchTag("TimeoutError", () => Effect.fail(timedOut(operation))),
        )
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            controller.abort()
            Queue.shutdownUnsafe(events)
          }),
        )
        return events
      })

      const exec = Effect.fnUntraced(function* (
        call: ExecCall,
      ): Effect.fn.Return<WebSocket, KubeApiError, Scope.Scope> {
        yield* bucket.take
        // The handler's own streams are the session's, so a CLOSE frame ends this session's output only.
        const handler = new WebSocketHandler(
          config,
          (uri, protocols, socketOptions) =>
            openExecSocket(uri, protocols, socketOptions, options.execHandshakeTimeoutMs),
          { stdin: new Readable({ read() {} }), stdout: call.stdout, stderr: call.stderr },
        )
        const socket = yield* Effect.tryPromise({
          try: (signal) =>
            new Exec(config, handler)
              .exec(
                call.namespace,
                call.pod,
                call.container,
                [...call.argv],
                call.stdout,
                call.stderr,
                null,
                false,
                call.onStatus,
              )
              .then((opened) => {
                if (signal.aborted) {
                  opened.terminate()
                }
                return opened
              }),
          catch: (cause) => kubeApiErrorOf("exec", cause),
        }).pipe(
          Effect.timeout(handshakeTimeout),
          Effect.catchTag("TimeoutError", () => Effect.fail(timedOut("exec"))),
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => socket.terminate()))
        return socket
      })

      return KubeApi.of({ origin, listPods, listNodes, watch, patchNodeLabels, exec })
    })
}

const withSignal = (signal: AbortSignal): ObservableMiddleware => ({
  pre: (context) => {
    context.setSignal(signal)
    return new Observable(Promise.resolve(context))
  },
  post: (context) => new Observable(Promise.resolve(context)),
})

const timedOut = (operation: string): KubeApiError =>
  new KubeApiError({ operation, kind: "timeout", detail: "no answer before the deadline" })

/** client-node ends a watch silent for 30 s with this error; it is a normal end, resumed from the last resourceVersion. */
const isInactivityTimeout = (error: unknown): boolean => error instanceof DOMException && error.name === "TimeoutError"

/** A watch opened after its caller gave up is closed at once. */
const abortWith = (signal: AbortSignal, controller: AbortController): AbortController => {
  if (signal.aborted) {
    controller.abort()
  }
  return controller
}

interface ListShape {
  readonly items: ReadonlyArray<unknown>
  readonly metadata?: { readonly resourceVersion?: string | undefined; readonly _continue?: string | undefined }
}

const listedPage = (list: ListShape): ListedPage => ({
  items: list.items,
  resourceVersion: list.metadata?.resourceVersion ?? "",
  continueToken:
    list.metadata?._continue === undefined || list.metadata._continue === "" ? undefined : list.metadata._continue,
})
