import { chmod, mkdir, writeFile } from "node:fs/promises"
import { dirname } from "node:path"

export interface KubeconfigEntry {
  readonly server: string
  readonly token: string
  readonly clusterName: string
  readonly namespace: string
  /** Name of the kubeconfig user; `<cluster>-admin` unless given. */
  readonly user?: string
  /** The CA (PEM) of an `https` server, written as `certificate-authority-data`; none for plain HTTP. */
  readonly certificateAuthority?: string
}

/**
 * The kubeconfig of the simulated cluster: one cluster, one token user, one context that is current.
 * An `https` server comes with its CA, as a real cluster's kubeconfig; a plain `http:` one gets
 * `insecure-skip-tls-verify`, since @kubernetes/client-node refuses an `http:` server without it.
 */
export const kubeconfigYaml = (entry: KubeconfigEntry): string => {
  const name = entry.clusterName
  const user = entry.user ?? `${name}-admin`
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- cluster:",
    entry.certificateAuthority === undefined
      ? "    insecure-skip-tls-verify: true"
      : `    certificate-authority-data: ${Buffer.from(entry.certificateAuthority).toString("base64")}`,
    `    server: ${entry.server}`,
    `  name: ${name}`,
    "contexts:",
    "- context:",
    `    cluster: ${name}`,
    `    namespace: ${entry.namespace}`,
    `    user: ${user}`,
    `  name: ${name}`,
    `current-context: ${name}`,
    "preferences: {}",
    "users:",
    `- name: ${user}`,
    "  user:",
    `    token: ${entry.token}`,
    "",
  ].join("\n")
}

/** Writes the kubeconfig readable by its owner only, as kubectl expects of a file holding a token. */
export const writeKubeconfig = async (path: string, entry: KubeconfigEntry): Promise<void> => {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, kubeconfigYaml(entry), { mode: 0o600 })
  await chmod(path, 0o600)
}
