import { readFileSync } from "node:fs"
import { dirname } from "node:path"
import { PerformanceObserver } from "node:perf_hooks"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { defaultInformerOptions } from "../src/kubeclient/cache/ResourceInformer.ts"
import { staticAccess } from "../src/kubeclient/clientcmd/ClusterAccess.ts"
import { currentContextOf } from "../src/kubeclient/clientcmd/Kubeconfig.ts"
import { KubeApi } from "../src/kubeclient/rest/KubeApi.ts"
import { makeKubeTransport, queryOf, readBody } from "../src/kubeclient/rest/KubeTransport.ts"
import * as ServiceInstruments from "../src/metrics/ServiceInstruments.ts"
import { clusterNodeOf } from "../src/receiver/kube/ClusterNode.ts"
import { devicePluginPodOf } from "../src/receiver/kube/DevicePluginPod.ts"
import * as NodeInformer from "../src/receiver/kube/NodeInformer.ts"
import * as PodInformer from "../src/receiver/kube/PodInformer.ts"
import type { FirstListDone, FirstListRun } from "./FirstListBench.ts"
import { cpuMillis } from "./ServiceProcess.ts"

/**
 * One first list of a simulated cluster's device-plugin pods and nodes, as the receiver takes it, in a
 * process of its own (the bench pins it): the two informers through the real API client until both are
 * synced, then the same pages fetched again as bytes, each list's JSON.parse and decode timed apart.
 * Reads its run from stdin and prints what it measured as one JSON line.
 */
const run = JSON.parse(readFileSync(0, "utf8")) as FirstListRun
const labelPrefix = "gpu-serials.dev"
const context = currentContextOf([
  { path: run.kubeconfigPath, directory: dirname(run.kubeconfigPath), text: readFileSync(run.kubeconfigPath, "utf8") },
])
if (Result.isFailure(context)) throw new Error(`the simulator's kubeconfig is unreadable: ${context.failure}`)
const access = staticAccess(context.success.cluster, context.success.user)

let gcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration
}).observe({ entryTypes: ["gc"] })

const informers = Effect.gen(function* () {
  const api = yield* KubeApi.make(access, {
    qps: 1_000,
    burst: 1_000,
    requestTimeoutMs: 30_000,
    execHandshakeTimeoutMs: 10_000,
  })
  const startedAt = performance.now()
  const cpuAtStart = cpuMillis(process.pid)
  const simulatorCpuAtStart = cpuMillis(run.simulatorPid)
  let firstChangeAt = 0
  const changed = () =>
    Effect.sync(() => {
      if (firstChangeAt === 0) firstChangeAt = performance.now()
    })
  const nodes = yield* NodeInformer.start(api, defaultInformerOptions, changed, labelPrefix)
  const pods = yield* PodInformer.start(
    api,
    { namespace: run.namespace, labelSelector: run.labelSelector },
    defaultInformerOptions,
    changed,
  )
  yield* Effect.all([nodes.synced, pods.synced], { concurrency: "unbounded", discard: true })
  return {
    syncedMs: performance.now() - startedAt,
    firstChangeMs: firstChangeAt - startedAt,
    cpuMs: cpuMillis(process.pid) - cpuAtStart,
    gcMs,
    simulatorCpuMs: cpuMillis(run.simulatorPid) - simulatorCpuAtStart,
    objects: nodes.size() + pods.size(),
  }
}).pipe(Effect.scoped, Effect.provide(ServiceInstruments.layerWithMeter({ serviceVersion: "bench" })))

const synced = await Effect.runPromise(informers)

/** Every page of a list, as bytes. */
const pagesOf = async (path: string, selector: Record<string, string>): Promise<ReadonlyArray<Buffer>> => {
  const transport = makeKubeTransport(access)
  const pages: Array<Buffer> = []
  let continueToken: string | undefined
  do {
    const signal = AbortSignal.timeout(30_000)
    const response = await transport.open(
      {
        method: "GET",
        path: path + queryOf({ ...selector, limit: defaultInformerOptions.pageSize, continue: continueToken }),
      },
      signal,
    )
    const body = await readBody("list", response, signal)
    pages.push(body)
    const token = (JSON.parse(body.toString("utf8")) as { metadata?: { continue?: string } }).metadata?.continue
    continueToken = token === undefined || token === "" ? undefined : token
  } while (continueToken !== undefined)
  return pages
}

/** Milliseconds of `work` over every page, the least of five passes. */
const fastest = (pages: ReadonlyArray<Buffer>, work: (body: Buffer) => void): number => {
  let least = Number.POSITIVE_INFINITY
  for (let pass = 0; pass < 5; pass++) {
    const startedAt = performance.now()
    for (const body of pages) work(body)
    least = Math.min(least, performance.now() - startedAt)
  }
  return least
}

const itemsOf = (body: Buffer): ReadonlyArray<unknown> =>
  (JSON.parse(body.toString("utf8")) as { items: Array<unknown> }).items

const decodeFigures = (pages: ReadonlyArray<Buffer>, decode: (item: unknown) => unknown) => {
  const parsed = new Map(pages.map((body) => [body, itemsOf(body)]))
  return {
    megabytes: pages.reduce((sum, body) => sum + body.length, 0) / 1024 / 1024,
    parseMs: fastest(pages, (body) => itemsOf(body)),
    decodeMs: fastest(pages, (body) => {
      for (const item of parsed.get(body) ?? []) decode(item)
    }),
  }
}

const done: FirstListDone = {
  ...synced,
  pods: decodeFigures(
    await pagesOf(`/api/v1/namespaces/${encodeURIComponent(run.namespace)}/pods`, { labelSelector: run.labelSelector }),
    devicePluginPodOf,
  ),
  nodes: decodeFigures(await pagesOf("/api/v1/nodes", {}), (item) => clusterNodeOf(item, labelPrefix)),
}
process.stdout.write(`${JSON.stringify(done)}\n`)
process.exit(0)
