import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseGoDuration } from "../../src/config/GoDuration.ts"
import { kustomize, type Manifest } from "./RenderedManifests.ts"

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
