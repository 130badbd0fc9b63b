import { readFileSync } from "node:fs"
import { dirname } from "node:path"
import { Result } from "effect"
import { type ClusterAccess, staticAccess } from "../../src/kubeclient/clientcmd/ClusterAccess.ts"
import { currentContextOf } from "../../src/kubeclient/clientcmd/Kubeconfig.ts"

/** The access a kubeconfig text with static credentials gives (the simulated cluster's, or one a test wrote). */
export const accessOfKubeconfig = (text: string, path = "kubeconfig"): ClusterAccess => {
  const context = currentContextOf([{ path, directory: dirname(path), text }])
  if (Result.isFailure(context)) throw new Error(context.failure)
  return staticAccess(context.success.cluster, context.success.user)
}

/** The access the kubeconfig file at `path` gives. */
export const accessOfKubeconfigFile = (path: string): ClusterAccess =>
  accessOfKubeconfig(readFileSync(path, "utf8"), path)
