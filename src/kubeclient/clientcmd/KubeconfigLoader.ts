import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type ClusterAccess, inClusterAccess, serviceAccountTokenPath, staticAccess } from "./ClusterAccess.ts"
import { currentContextOf, needsClientLibrary } from "./Kubeconfig.ts"

/** No usable Kubernetes configuration: the file is missing or unreadable, or there is none at all. */
export class KubeconfigError extends Schema.TaggedError<KubeconfigError>()("KubeconfigError", {
  source: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `cannot load the Kubernetes configuration from ${this.source}: ${this.detail}`
  }
}

/** Where the configuration was found, for the start-up log line: the kubeconfig file(s) read, or `in-cluster`. */
export type KubeconfigOrigin = string

/** A cluster's access and where its configuration came from. */
export interface LoadedAccess {
  readonly access: ClusterAccess
  readonly origin: KubeconfigOrigin
}

const inCluster = "in-cluster"

const readError = (cause: unknown): string => {
  const code = (cause as { code?: unknown } | undefined)?.code
  return code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : "unreadable file"
}

/** The kubeconfig files merged, their current context's access (client-node only where plugins need it). */
const fromFiles = (files: ReadonlyArray<string>): Effect.Effect<LoadedAccess, KubeconfigError> => {
  const source = files.join(delimiter)
  return Effect.gen(function* () {
    const texts = yield* Effect.forEach(files, (path) =>
      Effect.tryPromise({
        try: () => readFile(path, "utf8"),
        catch: (cause) => new KubeconfigError({ source: path, detail: readError(cause) }),
      }).pipe(Effect.map((text) => ({ path, directory: dirname(path), text }))),
    )
    const context = currentContextOf(texts)
    if (Result.isFailure(context)) {
      return yield* new KubeconfigError({ source, detail: context.failure })
    }
    if (!needsClientLibrary(context.success)) {
      return { access: staticAccess(context.success.cluster, context.success.user), origin: source }
    }
    const { clientNodeAccess } = yield* Effect.promise(() => import("./ClientNodeAccess.ts"))
    return yield* Effect.try({
      try: () => ({ access: clientNodeAccess(context.success), origin: source }),
      catch: (cause) =>
        new KubeconfigError({ source, detail: cause instanceof Error ? cause.message : "unusable credentials" }),
    })
  })
}

/**
 * Loads the access to the cluster to read: the kubeconfig file(s) named by `path` (a list separated like
 * `KUBECONFIG`, merged as kubectl merges them), else the service account of the pod we run in, else
 * `~/.kube/config`.
 */
export const loadClusterAccess = (path: string): Effect.Effect<LoadedAccess, KubeconfigError> => {
  const files = path.split(delimiter).filter((file) => file !== "")
  if (files.length > 0) {
    return fromFiles(files)
  }
  if (existsSync(serviceAccountTokenPath)) {
    const access = inClusterAccess(process.env)
    return typeof access === "string"
      ? Effect.fail(new KubeconfigError({ source: "the pod's service account", detail: access }))
      : Effect.succeed({ access, origin: inCluster })
  }
  const defaultPath = join(homedir(), ".kube", "config")
  if (existsSync(defaultPath)) {
    return fromFiles([defaultPath])
  }
  return Effect.fail(
    new KubeconfigError({
      source: "the environment",
      detail: `not running in a pod and ${defaultPath} does not exist; set KUBECONFIG or receivers.kube_exec.kubeconfig`,
    }),
  )
}
