import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, join } from "node:path"
import { KubeConfig } from "@kubernetes/client-node"
import { Effect, Schema } from "effect"

/** Where the service account of a pod finds its token, as client-node reads it in-cluster. */
const serviceAccountTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"

/** No usable Kubernetes configuration: the file is missing or unreadable, or there is none at all. */
export class KubeConfigError extends Schema.TaggedError<KubeConfigError>()("KubeConfigError", {
  source: Schema.String,
  detail: Schema.String,
}) {
  override get message(): string {
    return `cannot load the Kubernetes configuration from ${this.source}: ${this.detail}`
  }
}

/** Where the configuration was found, for the start-up log line: the kubeconfig file(s) read, or `in-cluster`. */
export type KubeConfigOrigin = string

const inCluster = "in-cluster"

const load = (source: string, fill: (config: KubeConfig) => void): Effect.Effect<KubeConfig, KubeConfigError> =>
  Effect.try({
    try: () => {
      const config = new KubeConfig()
      fill(config)
      const cluster = config.getCurrentCluster()
      if (cluster === null) {
        throw new Error("it names no current cluster")
      }
      return config
    },
    catch: (cause) =>
      new KubeConfigError({ source, detail: cause instanceof Error ? cause.message : "unreadable configuration" }),
  })

/**
 * Loads the configuration of the cluster to read: the kubeconfig file(s) named by `path` (a list separated
 * like `KUBECONFIG`, later files merged in), else the service account of the pod we run in, else
 * `~/.kube/config`.
 */
export const loadKubeConfig = (
  path: string,
): Effect.Effect<{ readonly config: KubeConfig; readonly origin: KubeConfigOrigin }, KubeConfigError> => {
  const files = path.split(delimiter).filter((file) => file !== "")
  if (files.length > 0) {
    return load(files.join(delimiter), (config) => {
      const [first, ...rest] = files
      config.loadFromFile(first as string)
      for (const file of rest) {
        const more = new KubeConfig()
        more.loadFromFile(file)
        config.mergeConfig(more)
      }
    }).pipe(Effect.map((config) => ({ config, origin: files.join(delimiter) })))
  }
  if (existsSync(serviceAccountTokenPath)) {
    return load("the pod's service account", (config) => config.loadFromCluster()).pipe(
      Effect.map((config) => ({ config, origin: inCluster })),
    )
  }
  const defaultPath = join(homedir(), ".kube", "config")
  if (existsSync(defaultPath)) {
    return load(defaultPath, (config) => config.loadFromFile(defaultPath)).pipe(
      Effect.map((config) => ({ config, origin: defaultPath })),
    )
  }
  return Effect.fail(
    new KubeConfigError({
      source: "the environment",
      detail: `not running in a pod and ${defaultPath} does not exist; set KUBECONFIG or receivers.kube_exec.kubeconfig`,
    }),
  )
}
