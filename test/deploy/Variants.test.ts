import { existsSync, readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseGoDuration } from "../../src/config/GoDuration.ts"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"
import {
  type Container,
  containersOf,
  deploymentOf,
  gpuSerialsContainer,
  kustomize,
  kustomizeOverlay,
  type Manifest,
  ofKind,
  type PolicyRule,
  valuesOf,
} from "./RenderedManifests.ts"

const packageVersion = (JSON.parse(readFileSync(`${repositoryRoot}package.json`, "utf8")) as { version: string })
  .version
/** docs/deploy.md, the page of every variant. */
const deployPage = readFileSync(`${repositoryRoot}docs/deploy.md`, "utf8")

/**
 * What each variant's service account may do, one line per rule:
 * `<kind> <namespace>: <apiGroup>/<resource>[<names>] <verbs>` (no namespace for a ClusterRole).
 * Least privilege: list, watch and exec on the device-plugin pods only where they run; nodes read-only
 * unless node labels are written; leases only with leader election, in the service's own namespace.
 */
const readsDevicePluginPods = (namespace: string) => [
  `Role ${namespace}: /pods get,list,watch`,
  `Role ${namespace}: /pods/exec get,create`,
  "ClusterRole: /nodes get,list,watch",
]
/** DRA discovery: the kubelet plugin's pods and exec in the DRA driver's namespace, ResourceSlices read-only. */
const readsDraPluginPods = (namespace: string) => [
  `Role ${namespace}: /pods get,list,watch`,
  `Role ${namespace}: /pods/exec get,create`,
  "ClusterRole: /nodes get,list,watch",
  "ClusterRole: resource.k8s.io/resourceslices get,list,watch",
]
const expectedGrants: Readonly<Record<string, ReadonlyArray<string>>> = {
  "deploy/base": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/ha": [
    ...readsDevicePluginPods("gpu-operator"),
    "Role gpu-serials: coordination.k8s.io/leases create",
    "Role gpu-serials: coordination.k8s.io/leases[gpu-serials-leader] get,update",
  ],
  "deploy/examples/node-labels": [...readsDevicePluginPods("gpu-operator"), "ClusterRole: /nodes patch"],
  "deploy/examples/otel-sidecar": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/nats": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/postgres": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/standalone-device-plugin": readsDevicePluginPods("nvidia-device-plugin"),
  "deploy/examples/network-policy": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/exec-policy": readsDevicePluginPods("gpu-operator"),
  "deploy/examples/dra": readsDraPluginPods("nvidia-dra-driver-gpu"),
  // The hub reads NATS only: no Kubernetes access at all.
  "deploy/examples/hub": [],
}

/** The component label of a variant's workload: the hub is a service of its own beside a cluster's inventory. */
const componentOf = (variant: string): string => (variant === "deploy/examples/hub" ? "hub" : "inventory")

/** Namespaces a variant uses without creating them: the GPU operator's, the device-plugin chart's, the DRA driver's. */
const externalNamespaces = ["gpu-operator", "nvidia-device-plugin", "nvidia-dra-driver-gpu"]

const grantsOf = (manifests: ReadonlyArray<Manifest>): ReadonlyArray<string> =>
  manifests
    .filter((manifest) => manifest.kind === "Role" || manifest.kind === "ClusterRole")
    .flatMap((role) =>
      (role.rules ?? []).flatMap((rule: PolicyRule) =>
        rule.apiGroups.flatMap((group) =>
          rule.resources.map((resource) => {
            const names = rule.resourceNames === undefined ? "" : `[${rule.resourceNames.join(",")}]`
            const scope = role.kind === "Role" ? `Role ${role.metadata.namespace}` : "ClusterRole"
            return `${scope}: ${group}/${resource}${names} ${rule.verbs.join(",")}`
          }),
        ),
      ),
    )

const millisOf = (duration: string | undefined): number => {
  const parsed = parseGoDuration(duration ?? "")
  if (Result.isFailure(parsed)) throw new Error(`not a duration: ${duration}`)
  return parsed.success
}

const matches = (selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

/** A named port of a container, or a number. */
const portExists = (container: Container, port: string | number) =>
  typeof port === "number" || (container.ports ?? []).some((candidate) => candidate.name === port)

describe.each(Object.keys(expectedGrants))("%s", (variant) => {
  const manifests = kustomize(variant)
  const deployment = deploymentOf(manifests)
  const pod = deployment.spec.template.spec
  const namespace = deployment.metadata.namespace ?? ""
  const exists = (kind: string, name: string, inNamespace?: string) =>
    manifests.some(
      (manifest) =>
        manifest.kind === kind && manifest.metadata.name === name && manifest.metadata.namespace === inNamespace,
    )

  it("is documented: a header with the command that applies it, and the same command in docs/deploy.md", () => {
    const command = `kubectl apply -k ${variant}`
    const header = readFileSync(`${repositoryRoot}${variant}/kustomization.yaml`, "utf8").split("\n")[0]
    expect(header).toMatch(/^# .*: kubectl apply -k /)
    expect(header?.endsWith(command)).toBe(true)
    expect(deployPage.includes(command), `docs/deploy.md shows ${command}`).toBe(true)
    const component = variant.replace("deploy/examples/", "deploy/components/")
    if (component !== variant && existsSync(`${repositoryRoot}${component}`)) {
      const componentHeader = readFileSync(`${repositoryRoot}${component}/kustomization.yaml`, "utf8").split("\n")[0]
      expect(componentHeader?.endsWith(command), `${component} names ${command}`).toBe(true)
    }
  })

  it("grants its service account exactly what the table says, and nothing with a wildcard", () => {
    expect([...grantsOf(manifests)].sort()).toEqual([...(expectedGrants[variant] ?? [])].sort())
    const everything = manifests.flatMap((manifest) => manifest.rules ?? [])
    for (const rule of everything) {
      expect([...rule.verbs, ...rule.resources, ...rule.apiGroups]).not.toContain("*")
    }
  })

  it("runs every container with liveness and readiness probes, requests and a memory limit", () => {
    for (const container of containersOf(pod)) {
      expect(container.livenessProbe, container.name).toBeDefined()
      expect(container.readinessProbe, container.name).toBeDefined()
      for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
        if (probe?.httpGet !== undefined) expect(portExists(container, probe.httpGet.port), container.name).toBe(true)
      }
      expect(container.resources?.requests?.cpu, container.name).toBeDefined()
      expect(container.resources?.requests?.memory, container.name).toBeDefined()
      // A memory limit protects the node; no CPU limit, as throttling would stall the event loop (and the
      // Collector's) past the probes' deadlines while the node has idle CPU.
      expect(container.resources?.limits?.memory, container.name).toBeDefined()
    }
  })

  it("runs every container under the restricted Pod Security Standard", () => {
    for (const container of containersOf(pod)) {
      const own = container.securityContext ?? {}
      const podLevel = pod.securityContext ?? {}
      expect(own.runAsNonRoot ?? podLevel.runAsNonRoot, container.name).toBe(true)
      expect(own.runAsUser ?? podLevel.runAsUser, container.name).not.toBe(0)
      expect(own.readOnlyRootFilesystem, container.name).toBe(true)
      expect(own.allowPrivilegeEscalation, container.name).toBe(false)
      expect(own.capabilities?.drop, container.name).toContain("ALL")
      expect(own.capabilities?.add ?? [], container.name).toEqual([])
      expect((own.seccompProfile ?? podLevel.seccompProfile)?.type, container.name).toBe("RuntimeDefault")
    }
  })

  it("pins every image: its own by the release's tag, third-party ones by tag and digest", () => {
    for (const container of containersOf(pod)) {
      if (container.name === "gpu-serials") {
        expect(container.image).toBe(`gpu-serials:${packageVersion}`)
      } else {
        expect(container.image, container.name).toMatch(/^[a-z0-9./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/)
        expect(container.image, container.name).not.toMatch(/:latest@/)
      }
    }
  })

  it("labels every object with the recommended labels, and keeps the Deployment's selector as it always was", () => {
    for (const manifest of manifests) {
      expect(manifest.metadata.labels, `${manifest.kind}/${manifest.metadata.name}`).toMatchObject({
        "app.kubernetes.io/name": "gpu-serials",
        "app.kubernetes.io/instance": "gpu-serials",
        "app.kubernetes.io/version": packageVersion,
        "app.kubernetes.io/part-of": "gpu-serials",
        "app.kubernetes.io/managed-by": "kustomize",
      })
    }
    for (const workload of [deployment, ...ofKind(manifests, "Service")]) {
      expect(workload.metadata.labels?.["app.kubernetes.io/component"]).toBe(componentOf(variant))
    }
    // A selector cannot change on upgrade: a version (or any other new label) in it would make
    // `kubectl apply` of the next release fail.
    expect(deployment.spec.selector.matchLabels).toEqual({
      "app.kubernetes.io/name": "gpu-serials",
      "app.kubernetes.io/component": componentOf(variant),
    })
    expect(deployment.spec.template.metadata.labels).toMatchObject({
      "app.kubernetes.io/component": componentOf(variant),
      "app.kubernetes.io/version": packageVersion,
    })
  })

  it("shuts down within SHUTDOWN_TIMEOUT, at least 5 s inside the pod's termination grace period", () => {
    const shutdown = millisOf(gpuSerialsContainer(pod).env?.find((env) => env.name === "SHUTDOWN_TIMEOUT")?.value)
    expect(shutdown + 5_000).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds * 1000)
  })

  it("puts every namespaced object in a namespace it creates, or the device plugin's", () => {
    const created = ofKind(manifests, "Namespace").map((manifest) => manifest.metadata.name)
    const clusterScoped = [
      "Namespace",
      "ClusterRole",
      "ClusterRoleBinding",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ]
    for (const manifest of manifests) {
      if (clusterScoped.includes(manifest.kind)) {
        expect(manifest.metadata.namespace, manifest.metadata.name).toBeUndefined()
      } else {
        expect([...created, ...externalNamespaces], `${manifest.kind}/${manifest.metadata.name}`).toContain(
          manifest.metadata.namespace,
        )
      }
    }
    expect(created).toContain(namespace)
  })

  it("reads the device plugin's pods in the namespace its Role is in", () => {
    const readNamespace = gpuSerialsContainer(pod).env?.find((env) => env.name === "NAMESPACE")?.value
    const podReaders = ofKind(manifests, "Role").filter((role) =>
      (role.rules ?? []).some((rule) => rule.resources.includes("pods/exec")),
    )
    expect(podReaders.map((role) => role.metadata.namespace)).toEqual(
      readNamespace === undefined ? [] : [readNamespace],
    )
  })

  it("runs as a service account that exists, bound only to roles that exist", () => {
    expect(exists("ServiceAccount", pod.serviceAccountName, namespace)).toBe(true)
    for (const binding of [...ofKind(manifests, "RoleBinding"), ...ofKind(manifests, "ClusterRoleBinding")]) {
      const roleRef = binding.roleRef
      if (roleRef === undefined) throw new Error(`${binding.metadata.name} has no roleRef`)
      const roleNamespace = roleRef.kind === "Role" ? binding.metadata.namespace : undefined
      expect(exists(roleRef.kind, roleRef.name, roleNamespace), `${binding.kind}/${binding.metadata.name}`).toBe(true)
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: pod.serviceAccountName, namespace }])
    }
    const boundRoles = [...ofKind(manifests, "RoleBinding"), ...ofKind(manifests, "ClusterRoleBinding")].map(
      (binding) => `${binding.roleRef?.kind}/${binding.roleRef?.name}`,
    )
    for (const role of [...ofKind(manifests, "Role"), ...ofKind(manifests, "ClusterRole")]) {
      expect(boundRoles, `${role.kind}/${role.metadata.name} is bound`).toContain(`${role.kind}/${role.metadata.name}`)
    }
  })

  it("selects its pods with every Service, PodDisruptionBudget and NetworkPolicy", () => {
    const podLabels = deployment.spec.template.metadata.labels
    for (const service of ofKind(manifests, "Service")) {
      const spec = service.spec as {
        selector: Record<string, string>
        ports: ReadonlyArray<{ targetPort: string | number }>
      }
      expect(service.metadata.namespace).toBe(namespace)
      expect(matches(spec.selector, podLabels)).toBe(true)
      for (const port of spec.ports) expect(portExists(gpuSerialsContainer(pod), port.targetPort)).toBe(true)
    }
    const selecting = [...ofKind(manifests, "PodDisruptionBudget"), ...ofKind(manifests, "NetworkPolicy")]
    for (const manifest of selecting) {
      const spec = manifest.spec as {
        selector?: { matchLabels: Record<string, string> }
        podSelector?: { matchLabels: Record<string, string> }
      }
      const selector = spec.selector ?? spec.podSelector
      expect(manifest.metadata.namespace).toBe(namespace)
      expect(selector !== undefined && matches(selector.matchLabels, podLabels), manifest.metadata.name).toBe(true)
    }
  })

  it("references only ConfigMaps and Secrets it renders, in the pod's namespace, with the keys it reads", () => {
    const keysOf = (kind: string, name: string) => {
      const source = manifests.find(
        (manifest) =>
          manifest.kind === kind && manifest.metadata.name === name && manifest.metadata.namespace === namespace,
      )
      return source === undefined ? undefined : Object.keys(valuesOf(source))
    }
    for (const volume of pod.volumes ?? []) {
      if (volume.configMap !== undefined) expect(keysOf("ConfigMap", volume.configMap.name), volume.name).toBeDefined()
      if (volume.secret !== undefined) expect(keysOf("Secret", volume.secret.secretName), volume.name).toBeDefined()
    }
    for (const container of containersOf(pod)) {
      for (const mount of container.volumeMounts ?? []) {
        expect((pod.volumes ?? []).map((volume) => volume.name)).toContain(mount.name)
      }
      for (const variable of container.env ?? []) {
        const secret = variable.valueFrom?.secretKeyRef
        if (secret !== undefined) expect(keysOf("Secret", secret.name), variable.name).toContain(secret.key)
        const configMap = variable.valueFrom?.configMapKeyRef
        if (configMap !== undefined) expect(keysOf("ConfigMap", configMap.name), variable.name).toContain(configMap.key)
      }
    }
  })
})

describe("an overlay combining components: standalone device plugin, ha, node labels, otel sidecar, network policy, exec policy", () => {
  const manifests = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/base
components:
  - {root}/deploy/components/standalone-device-plugin
  - {root}/deploy/components/ha
  - {root}/deploy/components/node-labels
  - {root}/deploy/components/otel-sidecar
  - {root}/deploy/components/network-policy
  - {root}/deploy/components/exec-policy
`)
  const pod = deploymentOf(manifests).spec.template.spec
  const env = Object.fromEntries(
    (gpuSerialsContainer(pod).env ?? []).map((variable) => [variable.name, variable.value]),
  )

  it("keeps what each component adds", () => {
    expect(deploymentOf(manifests).spec.replicas).toBe(2)
    expect(env).toMatchObject({
      NAMESPACE: "nvidia-device-plugin",
      LEADER_ELECTION: "true",
      LABELS_ENABLED: "true",
      EXPORTER_TYPE: "otlp",
    })
    expect(containersOf(pod).map((container) => container.name)).toEqual(["otel-collector", "gpu-serials"])
    expect(ofKind(manifests, "NetworkPolicy")).toHaveLength(2)
    expect(ofKind(manifests, "ValidatingAdmissionPolicy")).toHaveLength(1)
    expect(ofKind(manifests, "ValidatingAdmissionPolicyBinding")).toHaveLength(1)
  })

  it("grants the union of the components' rules, pods and exec in the device plugin's namespace", () => {
    expect([...grantsOf(manifests)].sort()).toEqual(
      [
        ...readsDevicePluginPods("nvidia-device-plugin"),
        "Role gpu-serials: coordination.k8s.io/leases create",
        "Role gpu-serials: coordination.k8s.io/leases[gpu-serials-leader] get,update",
        "ClusterRole: /nodes patch",
      ].sort(),
    )
  })
})

describe("an overlay combining components: DRA discovery, ha, node labels, network policy, exec policy", () => {
  const manifests = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/base
components:
  - {root}/deploy/components/ha
  - {root}/deploy/components/node-labels
  - {root}/deploy/components/network-policy
  - {root}/deploy/components/exec-policy
  - {root}/deploy/components/dra
`)
  const env = Object.fromEntries(
    (gpuSerialsContainer(deploymentOf(manifests).spec.template.spec).env ?? []).map((variable) => [
      variable.name,
      variable.value,
    ]),
  )

  it("keeps what each component adds, reading the DRA driver's kubelet plugin", () => {
    expect(deploymentOf(manifests).spec.replicas).toBe(2)
    expect(env).toMatchObject({
      DISCOVERY: "dra",
      NAMESPACE: "nvidia-dra-driver-gpu",
      CONTAINER: "gpus",
      LEADER_ELECTION: "true",
      LABELS_ENABLED: "true",
    })
    expect(ofKind(manifests, "NetworkPolicy")).toHaveLength(2)
    expect(ofKind(manifests, "ValidatingAdmissionPolicy")).toHaveLength(1)
  })

  it("grants the union of the components' rules, pods and exec in the DRA driver's namespace only", () => {
    expect([...grantsOf(manifests)].sort()).toEqual(
      [
        ...readsDraPluginPods("nvidia-dra-driver-gpu"),
        "Role gpu-serials: coordination.k8s.io/leases create",
        "Role gpu-serials: coordination.k8s.io/leases[gpu-serials-leader] get,update",
        "ClusterRole: /nodes patch",
      ].sort(),
    )
  })
})
