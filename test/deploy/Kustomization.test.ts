import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseGoDuration } from "../../src/config/GoDuration.ts"
import { draDefaults } from "../../src/receiver/kube/KubeExecConfig.ts"
import { gpuSerials } from "../cli/GpuSerialsCli.ts"
import {
  deploymentOf,
  gpuSerialsContainer,
  kustomize,
  kustomizeOverlay,
  type Manifest,
  resolvedEnvironment,
} from "./RenderedManifests.ts"

const rendered = (overlay = "deploy/base"): ReadonlyArray<Manifest> => kustomize(overlay)

interface Container {
  readonly env?: ReadonlyArray<{
    readonly name: string
    readonly value?: string
    readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } }
  }>
}

/** The environment of a deployment's first container, by variable name. */
const environmentOf = (deployment: Manifest | undefined): Readonly<Record<string, string | undefined>> => {
  const spec = deployment?.spec as { template: { spec: { containers: ReadonlyArray<Container> } } } | undefined
  const env = spec?.template.spec.containers[0]?.env ?? []
  return Object.fromEntries(env.map((variable) => [variable.name, variable.value]))
}

describe("deploy/base", () => {
  const manifests = rendered()
  const find = (kind: string) => manifests.filter((manifest) => manifest.kind === kind)

  it("grants pods and exec only in the device-plugin namespace, and nodes read-only", () => {
    const [role] = find("Role")
    expect(role?.metadata.namespace).toBe("gpu-operator")
    expect(role?.rules).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["get", "create"] },
    ])
    expect(find("ClusterRole").flatMap((clusterRole) => clusterRole.rules ?? [])).toEqual([
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
    ])
    const everyVerb = manifests.flatMap((manifest) => manifest.rules ?? []).flatMap((rule) => rule.verbs)
    expect(everyVerb).not.toContain("*")
  })

  it("leaves node labels off", () => {
    expect(environmentOf(find("Deployment")[0]).LABELS_ENABLED).toBe("false")
  })

  it("runs one replica with probes on /healthz and /readyz", () => {
    const [deployment] = find("Deployment")
    expect(deployment?.metadata.namespace).toBe("gpu-serials")
    expect(deployment?.spec).toMatchObject({
      replicas: 1,
      template: {
        spec: {
          serviceAccountName: "gpu-serials",
          containers: [
            {
              args: ["run"],
              livenessProbe: { httpGet: { path: "/healthz" } },
              readinessProbe: { httpGet: { path: "/readyz" } },
            },
          ],
        },
      },
    })
  })
})

describe("deploy/examples/ha", () => {
  const manifests = rendered("deploy/examples/ha")
  const find = (kind: string) => manifests.filter((manifest) => manifest.kind === kind)
  const deployment = find("Deployment")[0]
  const spec = deployment?.spec as {
    replicas: number
    strategy: { type: string }
    template: { metadata: { labels: Record<string, string> }; spec: { containers: ReadonlyArray<Container> } }
  }
  const env = spec.template.spec.containers[0]?.env ?? []
  const variable = (name: string) => env.find((entry) => entry.name === name)

  it("runs two replicas that elect a leader, named by the downward API", () => {
    expect(spec.replicas).toBe(2)
    expect(spec.strategy.type).toBe("RollingUpdate")
    expect(variable("LEADER_ELECTION")?.value).toBe("true")
    expect(variable("POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.name")
    expect(variable("LEASE_NAMESPACE")?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace")
    expect(variable("LEASE_NAME")?.value).toBe("gpu-serials-leader")
    // The base's settings are kept.
    expect(variable("CLUSTER_NAME")?.value).toBe("change-me")
    expect(variable("SHUTDOWN_TIMEOUT")?.value).toBe("20s")
  })

  it("keeps lease durations that hold lease > renew deadline > retry period", () => {
    const millis = (name: string) => {
      const parsed = parseGoDuration(variable(name)?.value ?? "")
      if (Result.isFailure(parsed)) throw new Error(`${name} is not a duration`)
      return parsed.success
    }
    expect(millis("LEASE_DURATION")).toBeGreaterThan(millis("LEASE_RENEW_DEADLINE"))
    expect(millis("LEASE_RENEW_DEADLINE")).toBeGreaterThan(millis("LEASE_RETRY_PERIOD"))
  })

  it("grants leases only in the service's own namespace: create, and get/update of its lease only", () => {
    const role = find("Role").find((candidate) => candidate.metadata.name === "gpu-serials-leader-election")
    expect(role?.metadata.namespace).toBe("gpu-serials")
    expect(role?.rules).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: ["gpu-serials-leader"],
        verbs: ["get", "update"],
      },
    ])
    const binding = find("RoleBinding").find((candidate) => candidate.metadata.name === "gpu-serials-leader-election")
    expect(binding).toMatchObject({
      metadata: { namespace: "gpu-serials" },
      roleRef: { kind: "Role", name: "gpu-serials-leader-election" },
      subjects: [{ kind: "ServiceAccount", name: "gpu-serials", namespace: "gpu-serials" }],
    })
    const leaseRules = manifests
      .flatMap((manifest) => manifest.rules ?? [])
      .filter((rule) => rule.resources.includes("leases"))
    expect(leaseRules.flatMap((rule) => rule.verbs).sort()).toEqual(["create", "get", "update"])
  })

  it("keeps one replica through voluntary disruptions", () => {
    const [budget] = find("PodDisruptionBudget")
    expect(budget?.metadata.namespace).toBe("gpu-serials")
    const budgetSpec = budget?.spec as { minAvailable: number; selector: { matchLabels: Record<string, string> } }
    expect(budgetSpec.minAvailable).toBe(1)
    for (const [key, value] of Object.entries(budgetSpec.selector.matchLabels))
      expect(spec.template.metadata.labels[key]).toBe(value)
  })
})

describe("deploy/examples/node-labels: deploy/base with the node-labels component", () => {
  const manifests = rendered("deploy/examples/node-labels")
  const find = (kind: string) => manifests.filter((manifest) => manifest.kind === kind)

  it("turns node labels on and adds patch on nodes, bound to the service account, and nothing else", () => {
    expect(environmentOf(find("Deployment")[0]).LABELS_ENABLED).toBe("true")
    const rules = find("ClusterRole").flatMap((clusterRole) => clusterRole.rules ?? [])
    expect(rules).toEqual(
      expect.arrayContaining([
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["nodes"], verbs: ["patch"] },
      ]),
    )
    expect(rules).toHaveLength(2)
    const binding = find("ClusterRoleBinding").find(
      (candidate) => (candidate as { roleRef?: { name: string } }).roleRef?.name === "gpu-serials-node-labeller",
    ) as { subjects?: ReadonlyArray<{ kind: string; name: string; namespace: string }> } | undefined
    expect(binding?.subjects).toEqual([{ kind: "ServiceAccount", name: "gpu-serials", namespace: "gpu-serials" }])
    const everyVerb = manifests.flatMap((manifest) => manifest.rules ?? []).flatMap((rule) => rule.verbs)
    expect(everyVerb).not.toContain("*")
    expect(everyVerb.filter((verb) => verb === "patch")).toHaveLength(1)
  })

  it("keeps the rest of deploy/base as it is", () => {
    const base = rendered()
    const names = (list: ReadonlyArray<Manifest>) =>
      list.map((manifest) => `${manifest.kind}/${manifest.metadata.name}`)
    expect(names(manifests)).toEqual(expect.arrayContaining(names(base)))
    expect(manifests.length).toBe(base.length + 2)
  })
})

describe("deploy/examples/dra: deploy/base reading GPUs allocated through Dynamic Resource Allocation", () => {
  const manifests = rendered("deploy/examples/dra")
  const find = (kind: string) => manifests.filter((manifest) => manifest.kind === kind)

  it("discovers through DRA, in the kubelet plugin's gpus container of the driver's v25.12 chart", () => {
    expect(environmentOf(find("Deployment")[0])).toMatchObject({
      DISCOVERY: "dra",
      NAMESPACE: "nvidia-dra-driver-gpu",
      LABEL_SELECTOR: "nvidia-dra-driver-gpu-component=kubelet-plugin",
      CONTAINER: "gpus",
      NVIDIA_SMI_PATH: "/driver-root/usr/bin/nvidia-smi",
      NVIDIA_ML_LIBRARY: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      LABELS_ENABLED: "false",
    })
  })

  it("spells out the service's own DISCOVERY=dra defaults, so an overlay edits them where it sees them", () => {
    const env = environmentOf(find("Deployment")[0])
    expect({
      namespace: env.NAMESPACE,
      labelSelector: env.LABEL_SELECTOR,
      container: env.CONTAINER,
      nvidiaSmiPath: env.NVIDIA_SMI_PATH,
      nvidiaMlLibrary: env.NVIDIA_ML_LIBRARY,
    }).toEqual(draDefaults)
  })

  it("reads ResourceSlices cluster-wide, read-only, and nothing else beyond the base's nodes", () => {
    expect(find("ClusterRole").flatMap((clusterRole) => clusterRole.rules ?? [])).toEqual(
      expect.arrayContaining([
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["resource.k8s.io"], resources: ["resourceslices"], verbs: ["get", "list", "watch"] },
      ]),
    )
    expect(find("ClusterRole").flatMap((clusterRole) => clusterRole.rules ?? [])).toHaveLength(2)
  })

  it("grants pods and exec in the DRA driver's namespace only: the device plugin's Role and binding are gone", () => {
    const roles = find("Role")
    expect(roles.map((role) => `${role.metadata.namespace}/${role.metadata.name}`)).toEqual([
      "nvidia-dra-driver-gpu/gpu-serials-dra-plugin-reader",
    ])
    expect(roles[0]?.rules).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["get", "create"] },
    ])
    expect(find("RoleBinding").map((binding) => binding.metadata.namespace)).toEqual(["nvidia-dra-driver-gpu"])
    expect(manifests.some((manifest) => manifest.metadata.namespace === "gpu-operator")).toBe(false)
  })

  it("is a configuration the service accepts: config validate exits 0 and config print shows DRA discovery", () => {
    const deployment = deploymentOf(manifests)
    const env = resolvedEnvironment(manifests, "gpu-serials", gpuSerialsContainer(deployment.spec.template.spec))
    const validate = gpuSerials(["config", "validate"], { env })
    expect(validate.stderr).toBe("")
    expect(validate.status).toBe(0)
    const print = gpuSerials(["config", "print"], { env })
    expect(print.status).toBe(0)
    expect(print.stdout).toContain("discovery: dra")
    expect(print.stdout).toContain(`nvidiaMlLibrary: ${draDefaults.nvidiaMlLibrary}`)
  })

  it("adds no ValidatingAdmissionPolicy of its own: the exec-policy component brings it", () => {
    expect(find("ValidatingAdmissionPolicy")).toEqual([])
  })

  it("moves the Role and its binding with NAMESPACE in an overlay: the driver's newer chart, dra-driver-nvidia-gpu", () => {
    const overlay = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/examples/dra
patches:
  - target: { kind: Deployment, name: gpu-serials }
    patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: { name: gpu-serials }
      spec:
        template:
          spec:
            containers:
              - name: gpu-serials
                env:
                  - { name: NAMESPACE, value: dra-driver-nvidia-gpu }
                  - { name: LABEL_SELECTOR, value: dra-driver-nvidia-gpu-component=kubelet-plugin }
replacements:
  - source:
      kind: Deployment
      name: gpu-serials
      fieldPath: spec.template.spec.containers.[name=gpu-serials].env.[name=NAMESPACE].value
    targets:
      - select: { kind: Role, name: gpu-serials-dra-plugin-reader }
        fieldPaths: [metadata.namespace]
      - select: { kind: RoleBinding, name: gpu-serials-dra-plugin-reader }
        fieldPaths: [metadata.namespace]
`)
    const deployment = overlay.find((manifest) => manifest.kind === "Deployment")
    expect(environmentOf(deployment)).toMatchObject({
      NAMESPACE: "dra-driver-nvidia-gpu",
      LABEL_SELECTOR: "dra-driver-nvidia-gpu-component=kubelet-plugin",
    })
    const grants = overlay.filter((manifest) => manifest.kind === "Role" || manifest.kind === "RoleBinding")
    expect(grants.map((grant) => `${grant.kind} ${grant.metadata.namespace}`)).toEqual([
      "Role dra-driver-nvidia-gpu",
      "RoleBinding dra-driver-nvidia-gpu",
    ])
  })
})
