import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { parseAllDocuments } from "yaml"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"

/** The parts of a Kubernetes object the deploy tests read. */
export interface Manifest {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly labels?: Readonly<Record<string, string>>
  }
  readonly rules?: ReadonlyArray<PolicyRule>
  readonly roleRef?: { readonly kind: string; readonly name: string }
  readonly subjects?: ReadonlyArray<{ readonly kind: string; readonly name: string; readonly namespace?: string }>
  readonly data?: Readonly<Record<string, string>>
  readonly stringData?: Readonly<Record<string, string>>
  readonly spec?: unknown
}

export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
}

export interface EnvVar {
  readonly name: string
  readonly value?: string
  readonly valueFrom?: {
    readonly fieldRef?: { readonly fieldPath: string }
    readonly secretKeyRef?: { readonly name: string; readonly key: string }
    readonly configMapKeyRef?: { readonly name: string; readonly key: string }
  }
}

export interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number }
}

export interface SecurityContext {
  readonly runAsNonRoot?: boolean
  readonly runAsUser?: number
  readonly readOnlyRootFilesystem?: boolean
  readonly allowPrivilegeEscalation?: boolean
  readonly capabilities?: { readonly drop?: ReadonlyArray<string>; readonly add?: ReadonlyArray<string> }
  readonly seccompProfile?: { readonly type: string }
}

export interface Container {
  readonly name: string
  readonly image: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<EnvVar>
  readonly ports?: ReadonlyArray<{ readonly name?: string; readonly containerPort: number }>
  readonly startupProbe?: Probe
  readonly livenessProbe?: Probe
  readonly readinessProbe?: Probe
  readonly resources?: {
    readonly requests?: Readonly<Record<string, string>>
    readonly limits?: Readonly<Record<string, string>>
  }
  readonly securityContext?: SecurityContext
  readonly volumeMounts?: ReadonlyArray<{ readonly name: string; readonly mountPath: string }>
  readonly restartPolicy?: string
}

export interface PodSpec {
  readonly serviceAccountName: string
  readonly terminationGracePeriodSeconds: number
  readonly securityContext?: SecurityContext
  readonly containers: ReadonlyArray<Container>
  readonly initContainers?: ReadonlyArray<Container>
  readonly volumes?: ReadonlyArray<{
    readonly name: string
    readonly configMap?: { readonly name: string }
    readonly secret?: { readonly secretName: string }
  }>
}

export interface DeploymentSpec {
  readonly replicas: number
  readonly selector: { readonly matchLabels: Readonly<Record<string, string>> }
  readonly template: {
    readonly metadata: { readonly labels: Readonly<Record<string, string>> }
    readonly spec: PodSpec
  }
}

/** The objects `kubectl kustomize` renders for a kustomization folder (relative to the repository root). */
export const kustomize = (folder: string): ReadonlyArray<Manifest> => {
  const run = spawnSync("kubectl", ["kustomize", folder], { cwd: repositoryRoot, encoding: "utf8", timeout: 20_000 })
  if (run.status !== 0) throw new Error(`kubectl kustomize ${folder} failed: ${run.stderr}`)
  return parseAllDocuments(run.stdout).map((document) => document.toJS() as Manifest)
}

/**
 * Renders an overlay of the user's own, written to a temporary folder with the files it names:
 * `kustomization` names the repository's folders relative to the repository root, as `{root}/deploy/...`.
 */
export const kustomizeOverlay = (
  kustomization: string,
  files: Readonly<Record<string, string>> = {},
): ReadonlyArray<Manifest> => {
  const folder = mkdtempSync(join(tmpdir(), "gpu-serials-overlay-"))
  try {
    // kustomize refuses absolute paths to other kustomizations.
    writeFileSync(
      join(folder, "kustomization.yaml"),
      kustomization.replaceAll("{root}", relative(folder, repositoryRoot)),
    )
    for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text)
    return kustomize(relative(repositoryRoot, folder))
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

export const ofKind = (manifests: ReadonlyArray<Manifest>, kind: string): ReadonlyArray<Manifest> =>
  manifests.filter((manifest) => manifest.kind === kind)

/** The variant's one Deployment, the gpu-serials workload. */
export const deploymentOf = (manifests: ReadonlyArray<Manifest>): Manifest & { readonly spec: DeploymentSpec } => {
  const deployments = ofKind(manifests, "Deployment")
  if (deployments.length !== 1) throw new Error(`expected one Deployment, rendered ${deployments.length}`)
  return deployments[0] as Manifest & { readonly spec: DeploymentSpec }
}

/** Every container of a pod, the sidecars run as restartable init containers included. */
export const containersOf = (pod: PodSpec): ReadonlyArray<Container> => [
  ...(pod.initContainers ?? []),
  ...pod.containers,
]

export const gpuSerialsContainer = (pod: PodSpec): Container => {
  const container = pod.containers.find((candidate) => candidate.name === "gpu-serials")
  if (container === undefined) throw new Error("no gpu-serials container")
  return container
}

/** A Secret's or ConfigMap's values, decoded. */
export const valuesOf = (manifest: Manifest): Readonly<Record<string, string>> => ({
  ...Object.fromEntries(
    Object.entries(manifest.data ?? {}).map(([key, value]) => [
      key,
      manifest.kind === "Secret" ? Buffer.from(value, "base64").toString("utf8") : value,
    ]),
  ),
  ...manifest.stringData,
})

/**
 * A container's environment as the kubelet would give it: plain values and the keys of the rendered
 * Secrets and ConfigMaps it references. Downward-API variables are left out (they have no value before
 * the pod exists).
 */
export const resolvedEnvironment = (
  manifests: ReadonlyArray<Manifest>,
  namespace: string,
  container: Container,
): Readonly<Record<string, string>> => {
  const lookUp = (kind: string, reference: { readonly name: string; readonly key: string }) => {
    const source = manifests.find(
      (manifest) =>
        manifest.kind === kind &&
        manifest.metadata.name === reference.name &&
        manifest.metadata.namespace === namespace,
    )
    const value = source === undefined ? undefined : valuesOf(source)[reference.key]
    if (value === undefined) throw new Error(`${kind} ${namespace}/${reference.name} has no key ${reference.key}`)
    return value
  }
  const entries = (container.env ?? []).flatMap((variable): Array<[string, string]> => {
    if (variable.value !== undefined) return [[variable.name, variable.value]]
    const from = variable.valueFrom
    if (from?.secretKeyRef !== undefined) return [[variable.name, lookUp("Secret", from.secretKeyRef)]]
    if (from?.configMapKeyRef !== undefined) return [[variable.name, lookUp("ConfigMap", from.configMapKeyRef)]]
    return []
  })
  return Object.fromEntries(entries)
}
