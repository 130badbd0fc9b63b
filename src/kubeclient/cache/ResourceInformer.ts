import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Health } from "../../component/Component.ts"
import { shortMessage } from "../../log/ShortMessage.ts"
import { ServiceMetrics } from "../../metrics/ServiceMetrics.ts"
import type { ListedPage, ListPage, WatchEvent, WatchEvents } from "../rest/KubeApi.ts"
import { KubeApiError, kindOfStatus } from "../rest/KubeApiError.ts"
import { type BackoffPolicy, backoffSchedule } from "../workqueue/KeyBackoff.ts"
import { type CacheChange, type CachedObject, InformerCache } from "./InformerCache.ts"

/** A watch that stayed silent (not even a bookmark) for longer than the informer accepts. */
export class WatchStalled extends Schema.TaggedError<WatchStalled>()("WatchStalled", {
  resource: Schema.String,
  silentMs: Schema.Number,
}) {
  override get message(): string {
    return `the ${this.resource} watch sent nothing for ${this.silentMs} ms`
  }
}

export type InformerFailure = KubeApiError | WatchStalled

/** Where an informer reads its objects from. */
export interface InformerSource<T extends CachedObject> {
  readonly resource: "pods" | "nodes" | "resourceslices"
  /** A page of the list, each object as `page.keep` (the informer's `decode`) makes it while the page is parsed. */
  readonly list: (page: ListPageKept<T>) => Effect.Effect<ListedPage<T | undefined>, KubeApiError>
  readonly watch: (
    resourceVersion: string,
    timeoutSeconds: number,
  ) => Effect.Effect<WatchEvents, KubeApiError, Scope.Scope>
  /** The cached form of a listed or watched object; `undefined` for an object that is not one. */
  readonly decode: (object: unknown) => T | undefined
}

export interface InformerOptions {
  /**
   * Objects per list page. 500, as client-go pages: measured against 10,000 pods and nodes, smaller pages
   * lower the transient heap of a relist a little but cost more CPU and time to the first sync, larger
   * ones grow the heap for no gain in time.
   */
  readonly pageSize: number
  /** A watch silent for this long is replaced. The API client ends a watch after 30 s of silence on its own. */
  readonly stallTimeoutMs: number
  /** Delay between restarts after errors: capped, jittered, growing while the errors go on. */
  readonly restartBackoff: BackoffPolicy
  /** Server-side lifetime of one watch is drawn in this range, so watches of many replicas do not end together. */
  readonly watchSeconds: { readonly min: number; readonly max: number }
}

export const defaultInformerOptions: InformerOptions = {
  pageSize: 500,
  stallTimeoutMs: 30_000,
  restartBackoff: { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 },
  watchSeconds: { min: 300, max: 600 },
}

/** A running informer: its cache, a signal that it listed once, and its health. */
export interface ResourceInformer<T extends CachedObject> {
  readonly get: (key: string) => T | undefined
  readonly values: () => IterableIterator<T>
  readonly size: () => number
  /** Completes once the first list was stored (and its changes handled), its last page included. */
  readonly synced: Effect.Effect<void>
  readonly isSynced: () => boolean
  /** Unhealthy before the first list and while list or watch fail. */
  readonly health: Effect.Effect<Health>
}

/** A page as an informer asks for it: its objects decoded as they are parsed. */
export type ListPageKept<T> = ListPage<T | undefined> & { readonly keep: (object: unknown) => T | undefined }

/** A list page asked for: the continue token it was asked with, its answer to come, and the next page's token. */
interface PageRequest<T> {
  readonly continueToken: string | undefined
  readonly page: Fiber.Fiber<ListedPage<T | undefined>, KubeApiError>
  readonly nextToken: Deferred.Deferred<string | undefined>
}

/** A watch that ends sooner than this without any event counts as failed. */
const minimumQuietWatchMs = 1_000

/** How one watch ended without an error. */
type WatchEnd = "ended" | "expired"

interface StatusFields {
  readonly code?: number
  readonly message?: string
}

const statusOf = (object: unknown): StatusFields => ({
  ...(Predicate.hasProperty(object, "code") && Predicate.isNumber(object.code) ? { code: object.code } : {}),
  ...(Predicate.hasProperty(object, "message") && Predicate.isString(object.message)
    ? { message: object.message }
    : {}),
})

const resourceVersionOf = (object: unknown): string | undefined =>
  Predicate.hasProperty(object, "metadata") &&
  Predicate.hasProperty(object.metadata, "resourceVersion") &&
  Predicate.isString(object.metadata.resourceVersion)
    ? object.metadata.resourceVersion
    : undefined

/**
 * Lists and then watches one kind of object into a cache, handing every change to `onChange` in order;
 * the first list page by page as the pages arrive, later ones whole (see `relist`). A watch that ends is resumed from the last resourceVersion seen (events or bookmarks); a 410 Gone
 * relists; a silent watch is replaced; any error restarts it after a capped, jittered backoff and counts
 * an informer restart. It runs until the scope closes, which closes its watch.
 */
export const start = <T extends CachedObject>(
  source: InformerSource<T>,
  options: InformerOptions,
  onChange: (change: CacheChange<T>) => Effect.Effect<void>,
): Effect.Effect<ResourceInformer<T>, never, Scope.Scope | ServiceMetrics> =>
  Effect.gen(function* () {
    const metrics = yield* ServiceMetrics
    const cache = new InformerCache<T>()
    const listed = yield* Deferred.make<void>()
    let synced = false
    let resourceVersion: string | undefined
    let lastFailure: string | undefined
    const annotate = Effect.annotateLogs({ resource: source.resource })

    const handle = (changes: Iterable<CacheChange<T>>) => Effect.forEach(changes, onChange, { discard: true })

    /**
     * Asks for one page in a fiber of the list's scope (its closing cancels the request). `nextToken` gets
     * the next page's continue token as soon as the page's head names it, or `undefined` once the page
     * is answered or failed without its head having named one.
     */
    const requestPage = (continueToken: string | undefined): Effect.Effect<PageRequest<T>, never, Scope.Scope> =>
      Effect.gen(function* () {
        const nextToken = yield* Deferred.make<string | undefined>()
        const announce = (token: string | undefined) => {
          Deferred.doneUnsafe(nextToken, Effect.succeed(token))
        }
        const page = yield* source
          .list({
            limit: options.pageSize,
            ...(continueToken === undefined ? {} : { continueToken }),
            onNextPage: announce,
            keep: source.decode,
          })
          .pipe(
            Effect.ensuring(Effect.sync(() => announce(undefined))),
            // Started at once, so the request is on its way even when this page is in already and handled next.
            Effect.forkScoped({ startImmediately: true }),
          )
        return { continueToken, page, nextToken }
      })

    /**
     * Lists every page. Until the first list completed, each page is stored and its changes handed over
     * as it arrives, so a large cluster's first objects are at work while the rest is listed; what an
     * earlier, broken attempt stored and no page holds any more is deleted at the end. Every later list
     * (after a 410 or an error) replaces the cache at once when its last page is in, as client-go does.
     */
    const relist = Effect.gen(function* () {
      const pageByPage = !synced
      const objects: Array<T> = []
      const seen = new Set<string>()
      let listedVersion = ""
      let requested: PageRequest<T> | undefined = yield* requestPage(undefined)
      while (requested !== undefined) {
        // The next page is asked for as soon as this one's head names it, so the server works on it while
        // this one arrives and is handled; never more than one page ahead.
        const announced: string | undefined = yield* Deferred.await(requested.nextToken)
        let next: PageRequest<T> | undefined
        if (announced !== undefined) {
          next = yield* requestPage(announced)
          // Lets the request leave (its connection, its headers) before this page is handled.
          yield* Effect.yieldNow
        }
        const page: ListedPage<T | undefined> = yield* Fiber.join(requested.page)
        if (next !== undefined && next.continueToken !== page.continueToken) {
          // The page's own token is the one to trust; a head that said otherwise is not followed.
          yield* Fiber.interrupt(next.page)
          next = undefined
        }
        const decoded: Array<T> = pageByPage ? [] : objects
        // Decoded by the API client as each object was parsed (`keep`); undefined for one that is not a T.
        for (const object of page.items) {
          if (object !== undefined) {
            decoded.push(object)
          }
        }
        if (pageByPage) {
          yield* handle(cache.upsertListed(decoded, seen))
        }
        listedVersion = page.resourceVersion
        requested = next ?? (page.continueToken === undefined ? undefined : yield* requestPage(page.continueToken))
      }
      yield* handle(pageByPage ? cache.removeUnlisted(seen) : cache.replace(objects))
      resourceVersion = listedVersion
      lastFailure = undefined
      if (!synced) {
        synced = true
        yield* Deferred.succeed(listed, undefined)
      }
    }).pipe(Effect.scoped)

    const apply = (event: WatchEvent): Effect.Effect<WatchEnd | undefined, KubeApiError> => {
      switch (event.type) {
        case "ADDED":
        case "MODIFIED":
        case "DELETED": {
          const object = source.decode(event.object)
          if (object === undefined) {
            return Effect.undefined
          }
          if (object.resourceVersion !== "") {
            resourceVersion = object.resourceVersion
          }
          const change = event.type === "DELETED" ? cache.remove(object) : cache.upsert(object)
          return change === undefined ? Effect.undefined : onChange(change).pipe(Effect.as(undefined))
        }
        case "BOOKMARK": {
          resourceVersion = resourceVersionOf(event.object) ?? resourceVersion
          return Effect.undefined
        }
        case "ERROR": {
          const status = statusOf(event.object)
          if (status.code === 410) {
            return Effect.succeed("expired")
          }
          return Effect.fail(
            new KubeApiError({
              operation: `watch ${source.resource}`,
              kind: status.code === undefined ? "server-error" : kindOfStatus(status.code),
              ...(status.code === undefined ? {} : { status: status.code }),
              detail: shortMessage(status.message ?? "the watch reported an error"),
            }),
          )
        }
        default:
          return Effect.undefined
      }
    }

    const nextEvent = (events: WatchEvents): Effect.Effect<WatchEvent | undefined, InformerFailure> =>
      Queue.take(events).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(options.stallTimeoutMs),
          orElse: () => Effect.fail(new WatchStalled({ resource: source.resource, silentMs: options.stallTimeoutMs })),
        }),
        Effect.catch((error) => (Cause.isDone(error) ? Effect.undefined : Effect.fail(error))),
      )

    const watchOnce = (from: string): Effect.Effect<WatchEnd, InformerFailure> =>
      Effect.scoped(
        Effect.gen(function* () {
          const seconds = yield* Random.nextIntBetween(options.watchSeconds.min, options.watchSeconds.max)
          const startedAt = yield* Clock.currentTimeMillis
          const events = yield* source.watch(from, seconds)
          let received = 0
          while (true) {
            const event = yield* nextEvent(events)
            if (event === undefined) {
              if (received === 0 && (yield* Clock.currentTimeMillis) - startedAt < minimumQuietWatchMs) {
                // A server that closes every watch at once must not be asked again in a tight loop.
                return yield* new KubeApiError({
                  operation: `watch ${source.resource}`,
                  kind: "connection",
                  detail: "the watch ended at once without an event",
                })
              }
              return "ended" as const
            }
            received++
            lastFailure = undefined
            const end = yield* apply(event)
            if (end !== undefined) {
              return end
            }
          }
        }),
      )

    /** One list (when needed) and one watch; fails on any error, succeeds when the watch ended normally. */
    const cycle: Effect.Effect<void, InformerFailure> = Effect.gen(function* () {
      if (resourceVersion === undefined) {
        yield* relist
      }
      const end = yield* watchOnce(resourceVersion ?? "")
      if (end === "expired") {
        yield* Effect.logInfo("watch resourceVersion expired, relisting").pipe(annotate)
        resourceVersion = undefined
      }
    }).pipe(
      Effect.tapError((failure) =>
        Effect.sync(() => {
          lastFailure = failure.message
          if (failure._tag === "KubeApiError" && failure.kind === "gone") {
            resourceVersion = undefined
          }
        }),
      ),
    )

    const restarts = backoffSchedule(options.restartBackoff).pipe(
      Schedule.setInputType<InformerFailure>(),
      Schedule.tap(({ input, duration }) =>
        metrics
          .informerRestarted(source.resource)
          .pipe(
            Effect.andThen(
              Effect.logWarning("informer restarting").pipe(
                Effect.annotateLogs({ reason: input.message, delayMs: Duration.toMillis(duration) }),
                annotate,
              ),
            ),
          ),
      ),
    )

    yield* cycle.pipe(Effect.retry(restarts), Effect.forever, Effect.forkScoped)

    return {
      get: (key) => cache.get(key),
      values: () => cache.values(),
      size: () => cache.size,
      synced: Deferred.await(listed),
      isSynced: () => synced,
      health: Effect.sync(() => {
        if (lastFailure !== undefined) {
          return { healthy: false, message: `${source.resource}: ${lastFailure}` }
        }
        return synced ? { healthy: true } : { healthy: false, message: `${source.resource}: not listed yet` }
      }),
    }
  })
