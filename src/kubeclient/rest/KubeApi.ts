// kubeclient/ is a Kubernetes client shaped like client-go (rest, clientcmd, remotecommand, cache,
// workqueue, leaderelection, labels): it knows no component of gpu-serials, which build on it.
import type { IncomingMessage } from "node:http"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type WebSocket from "ws"
import type { ClusterAccess } from "../clientcmd/ClusterAccess.ts"
import { type KubeconfigError, type KubeconfigOrigin, loadClusterAccess } from "../clientcmd/KubeconfigLoader.ts"
import type { LabelPatch } from "../labels/LabelPatch.ts"
import { type ExecCall, openExecSession } from "../remotecommand/ExecSession.ts"
import { type ResourceSliceVersion, resourceSlicesPath } from "../resource/ResourceSlice.ts"
import { BodyBuffers } from "./BodyBuffers.ts"
import { KubeApiError, kubeApiErrorOf } from "./KubeApiError.ts"
import { type KubeRequest, makeKubeTransport, queryOf, readBody, refusal } from "./KubeTransport.ts"
import { listOfBody } from "./ListBody.ts"
import { ListHeadReader } from "./ListHead.ts"
import * as TokenBucket from "./TokenBucket.ts"
import { type WatchEvent, watchEventLines } from "./WatchEventLines.ts"

export type { ExecCall } from "../remotecommand/ExecSession.ts"
export type { WatchEvent } from "./WatchEventLines.ts"

/** One page of a list call; `A` is what the page keeps of each item. */
export interface ListPage<A = unknown> {
  /** Continue token of the previous page; absent for the first. */
  readonly continueToken?: string
  readonly limit: number
  /**
   * Told the next page's continue token as soon as this page's head (its metadata, which the API server
   * writes before the items) was read, so the next page can be asked for while this one still arrives and
   * is parsed: at most once, before the page is answered, and never for a body whose head is not in that
   * shape (see `ListHeadReader`). The answered page's own token stays the one to trust.
   */
  readonly onNextPage?: (continueToken: string) => void
  /**
   * What the page keeps of each listed object (a pure function; the object itself when absent), applied
   * as each object is parsed, so that a large page's raw objects are garbage at once instead of all
   * living until the whole page is parsed.
   */
  readonly keep?: (item: unknown) => A
}

/** A listed page: what it kept of its objects, the list's resourceVersion and the token of the next page, if any. */
export interface ListedPage<A = unknown> {
  readonly items: ReadonlyArray<A>
  readonly resourceVersion: string
  readonly continueToken: string | undefined
}

export interface WatchRequest {
  /** Collection path, e.g. `/api/v1/namespaces/gpu-operator/pods` or `/api/v1/nodes`. */
  readonly path: string
  readonly labelSelector?: string
  readonly fieldSelector?: string
  /** Resume after this resourceVersion. */
  readonly resourceVersion: string
  /** Server-side lifetime of the watch. */
  readonly timeoutSeconds: number
}

/**
 * A watch's events in the order they arrived. Taking fails with `Done` when the watch ended normally (the
 * server closed it, or it stayed silent for the watch inactivity deadline) and with a `KubeApiError` when it broke.
 */
export type WatchEvents = Queue.Dequeue<WatchEvent, KubeApiError | Cause.Done>

export interface KubeApiOptions {
  /** Kubeconfig path(s); empty: in-cluster, then `~/.kube/config`. */
  readonly kubeconfig: string
  readonly qps: number
  readonly burst: number
  /** Deadline of each REST call (one page of a list). */
  readonly requestTimeoutMs: number
  /** Deadline of the WebSocket upgrade of an exec. */
  readonly execHandshakeTimeoutMs: number
  /** A watch silent (not even a bookmark) for this long ends normally; `defaultWatchInactivityMs` unless given. */
  readonly watchInactivityMs?: number
  /**
   * Longest a node label patch lets the calls waiting for a token go first before it takes its turn among
   * them; `TokenBucket.defaultYieldLimitMs` (2 s) unless given.
   */
  readonly labelPatchYieldLimitMs?: number
}

export const defaultRequestTimeoutMs = 30_000
export const defaultExecHandshakeTimeoutMs = 10_000

/** Slack between a request's own abort and the Effect deadline above it. */
const deadlineSlackMs = 1_000

/** A call given a deadline did not get its token or its answer before it. */
export class CallDeadlinePassed extends Schema.TaggedError<CallDeadlinePassed>()("CallDeadlinePassed", {
  /** What was attempted, e.g. `exec`. */
  operation: Schema.String,
}) {
  override get message(): string {
    return `${this.operation}: the call's deadline passed`
  }
}

/**
 * The Kubernetes API as the receiver uses it: pages of pods and nodes, watches, exec sessions and patches
 * of node labels. Every
 * call takes a token from one QPS/BURST bucket first and has a deadline; watches and exec sockets are
 * closed when the scope that opened them closes. Node label patches yield: a patch takes only a spare
 * token, one that no other call waits for nor a reading queued to come, or, once it has waited
 * `labelPatchYieldLimitMs`, its turn among them; so readings come first and patches never starve.
 */
export class KubeApi extends Context.Service<
  KubeApi,
  {
    /** The kubeconfig file(s) read, `in-cluster`, or `given` for a configuration handed over by the caller. */
    readonly origin: KubeconfigOrigin
    readonly listPods: <A = unknown>(
      namespace: string,
      labelSelector: string,
      page: ListPage<A>,
    ) => Effect.Effect<ListedPage<A>, KubeApiError>
    readonly listNodes: <A = unknown>(page: ListPage<A>) => Effect.Effect<ListedPage<A>, KubeApiError>
    /**
     * The versions the server serves of an API group (`GET /apis/<group>`), empty when it serves none of
     * them (404).
     */
    readonly apiGroupVersions: (group: string) => Effect.Effect<ReadonlyArray<string>, KubeApiError>
    /** A page of the cluster's ResourceSlices in `version`, filtered by a field selector (`spec.driver=…`). */
    readonly listResourceSlices: <A = unknown>(
      version: ResourceSliceVersion,
      fieldSelector: string,
      page: ListPage<A>,
    ) => Effect.Effect<ListedPage<A>, KubeApiError>
    readonly watch: (request: WatchRequest) => Effect.Effect<WatchEvents, KubeApiError, Scope.Scope>
    /**
     * Merges `labels` into the node's `metadata.labels` (a JSON merge patch without resourceVersion, so it
     * never conflicts): a value sets a label, `null` removes it, other labels stay as they are. Answers
     * the node's resourceVersion after the patch. It yields its token to the other calls waiting for one
     * and, while `readingsQueued` answers more than 0, to the readings queued to come.
     */
    readonly patchNodeLabels: (
      node: string,
      labels: LabelPatch,
      readingsQueued?: () => number,
    ) => Effect.Effect<string, KubeApiError>
    /** Node label patches waiting for a token, behind the other calls. */
    readonly labelPatchesWaiting: () => number
    /**
     * Opens the exec session; the socket is terminated when the scope closes. With `deadlineMillis` (a
     * Clock time), the token and the upgrade are waited for until then at most: past it the call fails
     * with `CallDeadlinePassed`.
     */
    readonly exec: (
      call: ExecCall,
      deadlineMillis?: number,
    ) => Effect.Effect<WebSocket, KubeApiError | CallDeadlinePassed, Scope.Scope>
    /**
     * `exec` without a scope, for a caller that closes the session itself: the socket is the caller's to
     * terminate once it has it. Interrupted or past its deadline before the socket opened, the opening is
     * abandoned and the socket terminated.
     */
    readonly openExec: (
      call: ExecCall,
      deadlineMillis?: number,
    ) => Effect.Effect<WebSocket, KubeApiError | CallDeadlinePassed>
  }
>()("gpu-serials/kubeclient/rest/KubeApi") {
  /** The API of the cluster a kubeconfig (or the pod's service account) names. */
  static readonly layer = (options: KubeApiOptions): Layer.Layer<KubeApi, KubeconfigError> =>
    Layer.effect(
      KubeApi,
      Effect.gen(function* () {
        const { access, origin } = yield* loadClusterAccess(options.kubeconfig)
        return yield* KubeApi.make(access, options, origin)
      }),
    )

  static readonly make = (
    access: ClusterAccess,
    options: Omit<KubeApiOptions, "kubeconfig">,
    origin: KubeconfigOrigin = "given",
  ): Effect.Effect<KubeApi["Service"]> =>
    Effect.gen(function* () {
      const bucket = yield* TokenBucket.make(
        { qps: options.qps, burst: options.burst },
        options.labelPatchYieldLimitMs ?? TokenBucket.defaultYieldLimitMs,
      )
      const transport = makeKubeTransport(access)
      const listBodies = new BodyBuffers()
      const requestTimeout = Duration.millis(options.requestTimeoutMs + deadlineSlackMs)
      const handshakeTimeoutMillis = options.execHandshakeTimeoutMs + deadlineSlackMs

      /**
       * One request and its whole body, read by `parse`, under the request deadline, after `token`;
       * `bodyReader` makes, for each attempt, what sees the body's chunks as they arrive. A list page's
       * body is gathered in one of `listBodies`, which the next page uses again: `parse` reads it out, and
       * keeps no view of it. Other answers (a patched node, an API group) are small.
       */
      const call = <A>(
        operation: string,
        request: KubeRequest,
        parse: (operation: string, body: Buffer) => A,
        token: Effect.Effect<void> = bucket.take,
        bodyReader?: () => (chunk: Buffer) => void,
        bodies?: BodyBuffers,
      ): Effect.Effect<A, KubeApiError> =>
        token.pipe(
          Effect.andThen(
            Effect.tryPromise({
              try: async (interrupted) => {
                const signal = AbortSignal.any([interrupted, AbortSignal.timeout(options.requestTimeoutMs)])
                const response = await transport.open(request, signal)
                const into = bodies?.take()
                try {
                  return parse(operation, await readBody(operation, response, signal, bodyReader?.(), into))
                } finally {
                  if (into !== undefined) bodies?.give(into)
                }
              },
              catch: (cause) => kubeApiErrorOf(operation, cause),
            }).pipe(Effect.timeout(requestTimeout)),
          ),
          Effect.catchTag("TimeoutError", () => Effect.fail(timedOut(operation))),
        )

      const list = <A>(
        operation: string,
        path: string,
        selector: Record<string, string>,
        page: ListPage<A>,
      ): Effect.Effect<ListedPage<A>, KubeApiError> =>
        call(
          operation,
          { method: "GET", path: path + queryOf({ ...selector, limit: page.limit, continue: page.continueToken }) },
          (operation, body) => listedPage(operation, body, page.keep ?? (sameItem as (item: unknown) => A)),
          bucket.take,
          page.onNextPage === undefined ? undefined : nextPageAnnouncer(page.onNextPage),
          listBodies,
        )

      const listPods = <A>(namespace: string, labelSelector: string, page: ListPage<A>) =>
        list("list pods", `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, { labelSelector }, page)

      const listNodes = <A>(page: ListPage<A>) => list("list nodes", "/api/v1/nodes", {}, page)

      const apiGroupVersions = (group: string) =>
        call("discover api group", { method: "GET", path: `/apis/${encodeURIComponent(group)}` }, parsedAnswer).pipe(
          Effect.map(groupVersionsOf),
          Effect.catchIf(
            (error) => error.status === 404,
            () => Effect.succeed([]),
          ),
        )

      const listResourceSlices = <A>(version: ResourceSliceVersion, fieldSelector: string, page: ListPage<A>) =>
        list("list resourceslices", resourceSlicesPath(version), { fieldSelector }, page)

      const patchNodeLabels = (node: string, labels: LabelPatch, readingsQueued: () => number = noneQueued) =>
        call(
          "patch node",
          {
            method: "PATCH",
            path: `/api/v1/nodes/${encodeURIComponent(node)}`,
            contentType: "application/merge-patch+json",
            body: JSON.stringify({ metadata: { labels } }),
          },
          parsedAnswer,
          bucket.takeYielding(readingsQueued),
        ).pipe(Effect.map(resourceVersionOf))

      const watch = Effect.fnUntraced(function* (
        request: WatchRequest,
      ): Effect.fn.Return<WatchEvents, KubeApiError, Scope.Scope> {
        const operation = `watch ${request.path}`
        yield* bucket.take
        const events = yield* Queue.unbounded<WatchEvent, KubeApiError | Cause.Done>()
        const path =
          request.path +
          queryOf({
            watch: true,
            resourceVersion: request.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: request.timeoutSeconds,
            labelSelector: request.labelSelector,
            fieldSelector: request.fieldSelector,
          })
        const response = yield* Effect.tryPromise({
          try: async (interrupted) => {
            const signal = AbortSignal.any([interrupted, AbortSignal.timeout(options.requestTimeoutMs)])
            const response = await transport.open({ method: "GET", path }, signal)
            if (interrupted.aborted) {
              response.destroy()
            }
            return response
          },
          catch: (cause) => kubeApiErrorOf(operation, cause),
        }).pipe(
          Effect.timeout(requestTimeout),
          Effect.catchTag("TimeoutError", () => Effect.fail(timedOut(operation))),
        )
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            response.destroy()
            Queue.shutdownUnsafe(events)
          }),
        )
        streamEvents(operation, options.watchInactivityMs ?? defaultWatchInactivityMs, response, events)
        return events
      })

      const execDeadlinePassed = Effect.fail(new CallDeadlinePassed({ operation: "exec" }))

      /**
       * The upgrade of an exec session, within `leftMillis` or the handshake deadline, whichever is first:
       * one callback with its own timer, no fiber raced against a sleep. `opened` hears the socket before
       * the caller resumes; a socket that opens after the call was interrupted or timed out is terminated.
       */
      const upgrade = (
        call: ExecCall,
        leftMillis: number,
        opened?: (socket: WebSocket) => void,
      ): Effect.Effect<WebSocket, KubeApiError | CallDeadlinePassed> =>
        Effect.callback<WebSocket, KubeApiError | CallDeadlinePassed>((resume) => {
          const controller = new AbortController()
          const byDeadline = leftMillis < handshakeTimeoutMillis
          const timer = setTimeout(
            () => {
              controller.abort()
              resume(byDeadline ? execDeadlinePassed : Effect.fail(timedOut("exec")))
            },
            byDeadline ? leftMillis : handshakeTimeoutMillis,
          )
          openExecSession(transport, call, options.execHandshakeTimeoutMs, controller.signal).then(
            (socket) => {
              clearTimeout(timer)
              if (controller.signal.aborted) {
                socket.terminate()
                return
              }
              opened?.(socket)
              resume(Effect.succeed(socket))
            },
            (cause: unknown) => {
              clearTimeout(timer)
              resume(Effect.fail(kubeApiErrorOf("exec", cause)))
            },
          )
          return Effect.sync(() => {
            clearTimeout(timer)
            controller.abort()
          })
        })

      /** A token (by the deadline, when there is one), then the upgrade within what is left of it. */
      const tokenThenUpgrade = (
        call: ExecCall,
        deadlineMillis: number | undefined,
        opened?: (socket: WebSocket) => void,
      ): Effect.Effect<WebSocket, KubeApiError | CallDeadlinePassed> =>
        deadlineMillis === undefined
          ? Effect.andThen(bucket.take, upgrade(call, Number.POSITIVE_INFINITY, opened))
          : Effect.flatMap(bucket.takeBy(deadlineMillis), (taken) =>
              taken
                ? Effect.clockWith((clock) => upgrade(call, deadlineMillis - clock.currentTimeMillisUnsafe(), opened))
                : execDeadlinePassed,
            )

      const openExec = (call: ExecCall, deadlineMillis?: number) => tokenThenUpgrade(call, deadlineMillis)

      /** The finaliser is in the scope before the upgrade starts, so no opened socket outlives it. */
      const exec = (
        call: ExecCall,
        deadlineMillis?: number,
      ): Effect.Effect<WebSocket, KubeApiError | CallDeadlinePassed, Scope.Scope> =>
        Effect.suspend(() => {
          let session: WebSocket | undefined
          return Effect.andThen(
            Effect.addFinalizer(() => Effect.sync(() => session?.terminate())),
            tokenThenUpgrade(call, deadlineMillis, (socket) => {
              session = socket
            }),
          )
        })

      return KubeApi.of({
        origin,
        listPods,
        listNodes,
        apiGroupVersions,
        listResourceSlices,
        watch,
        patchNodeLabels,
        labelPatchesWaiting: bucket.yieldingCalls,
        exec,
        openExec,
      })
    })
}

const noneQueued = (): number => 0

/** A reader of a list body's chunks that tells `onNextPage` the continue token its head holds, if any. */
const nextPageAnnouncer = (onNextPage: (continueToken: string) => void) => (): ((chunk: Buffer) => void) => {
  const head = new ListHeadReader()
  return (chunk) => {
    if (head.done) return
    const continueToken = head.push(chunk)?.continueToken
    if (continueToken !== undefined) onNextPage(continueToken)
  }
}

/** A watch that sends nothing, not even a bookmark, for this long ends; it is resumed from its last resourceVersion. */
export const defaultWatchInactivityMs = 30_000

/**
 * Feeds a watch response into `events`: each line an event; the end of the body (the server's timeout),
 * or silence for `inactivityMs`, ends them normally; a refusal, a broken connection or an unreadable
 * stream fails them.
 */
const streamEvents = (
  operation: string,
  inactivityMs: number,
  response: IncomingMessage,
  events: Queue.Queue<WatchEvent, KubeApiError | Cause.Done>,
): void => {
  const status = response.statusCode ?? 0
  if (status !== 200) {
    readBody(operation, response, AbortSignal.timeout(watchRefusalReadMs)).then(
      () => Queue.failCauseUnsafe(events, Cause.fail(refusal(operation, status, ""))),
      (error: unknown) => Queue.failCauseUnsafe(events, Cause.fail(kubeApiErrorOf(operation, error))),
    )
    return
  }
  let finished = false
  const finish = (error: KubeApiError | undefined) => {
    if (finished) return
    finished = true
    clearTimeout(silence)
    if (error === undefined) {
      Queue.endUnsafe(events)
    } else {
      Queue.failCauseUnsafe(events, Cause.fail(error))
    }
    response.destroy()
  }
  const silence = setTimeout(() => finish(undefined), inactivityMs)
  silence.unref()
  const lines = watchEventLines((event) => {
    Queue.offerUnsafe(events, event)
  })
  response.on("data", (chunk: Buffer) => {
    if (finished) return
    silence.refresh()
    try {
      lines.push(chunk)
    } catch (error) {
      finish(kubeApiErrorOf(operation, error))
    }
  })
  response.on("end", () => {
    if (finished) return
    lines.end()
    finish(undefined)
  })
  response.on("error", (error) => finish(kubeApiErrorOf(operation, error)))
  response.on("close", () => {
    if (!response.complete) {
      finish(new KubeApiError({ operation, kind: "connection", detail: "the watch connection broke" }))
    }
  })
}

/** A refused watch's Status body comes with its headers; this only bounds a server that never sends it. */
const watchRefusalReadMs = 5_000

/** An answer's JSON; one that is not JSON is the server's fault, and its text stays out of the error. */
const parsedAnswer = (operation: string, body: Buffer): unknown => {
  try {
    return JSON.parse(body.toString("utf8"))
  } catch {
    throw new KubeApiError({ operation, kind: "server-error", detail: "the answer is not JSON" })
  }
}

const timedOut = (operation: string): KubeApiError =>
  new KubeApiError({ operation, kind: "timeout", detail: "no answer before the deadline" })

const objectOrEmpty = (body: unknown): object => (typeof body === "object" && body !== null ? body : {})

interface ListShape {
  readonly items?: ReadonlyArray<unknown> | null
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string } | null
}

const sameItem = (item: unknown): unknown => item

/**
 * A list answer's page, each item as `keep` makes it: parsed item by item where the body's shape allows
 * (see `listOfBody`), else as a whole.
 */
const listedPage = <A>(operation: string, body: Buffer, keep: (item: unknown) => A): ListedPage<A> => {
  const byItem = listOfBody(body, keep)
  const list = (byItem?.head ?? objectOrEmpty(parsedAnswer(operation, body))) as ListShape
  const continueToken = list.metadata?.continue
  return {
    items: byItem?.items ?? (Array.isArray(list.items) ? list.items.map(keep) : []),
    resourceVersion: typeof list.metadata?.resourceVersion === "string" ? list.metadata.resourceVersion : "",
    continueToken: typeof continueToken === "string" && continueToken !== "" ? continueToken : undefined,
  }
}

const resourceVersionOf = (body: unknown): string => {
  const metadata = (typeof body === "object" && body !== null ? body : {}) as {
    readonly metadata?: { readonly resourceVersion?: unknown } | null
  }
  const version = metadata.metadata?.resourceVersion
  return typeof version === "string" ? version : ""
}

/** The `version`s of an APIGroup answer (`{versions: [{groupVersion, version}]}`). */
const groupVersionsOf = (body: unknown): ReadonlyArray<string> => {
  const group = (typeof body === "object" && body !== null ? body : {}) as {
    readonly versions?: ReadonlyArray<{ readonly version?: unknown }> | null
  }
  if (!Array.isArray(group.versions)) return []
  return group.versions.flatMap((entry: { readonly version?: unknown }) =>
    typeof entry?.version === "string" ? [entry.version] : [],
  )
}
