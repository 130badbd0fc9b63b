import { readFileSync } from "node:fs"
import { isIPv4 } from "node:net"
import { describe, expect, it } from "vitest"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"
import {
  deploymentOf,
  gpuSerialsContainer,
  kustomize,
  kustomizeOverlay,
  type Manifest,
  ofKind,
} from "./RenderedManifests.ts"

interface Peer {
  readonly ipBlock?: { readonly cidr: string }
  readonly namespaceSelector?: { readonly matchLabels: Readonly<Record<string, string>> }
  readonly podSelector?: { readonly matchLabels: Readonly<Record<string, string>> }
}

interface Rule {
  readonly to?: ReadonlyArray<Peer>
  readonly from?: ReadonlyArray<Peer>
  readonly ports?: ReadonlyArray<{ readonly protocol: string; readonly port: string | number }>
}

interface NetworkPolicySpec {
  readonly policyTypes: ReadonlyArray<string>
  readonly ingress?: ReadonlyArray<Rule>
  readonly egress?: ReadonlyArray<Rule>
}

const specOf = (policy: Manifest) => policy.spec as NetworkPolicySpec

/** One line per egress destination and port, e.g. `kube-system/k8s-app=kube-dns UDP/53`. */
const egressOf = (policies: ReadonlyArray<Manifest>): ReadonlyArray<string> =>
  policies.flatMap((policy) =>
    (specOf(policy).egress ?? []).flatMap((rule) =>
      (rule.to ?? []).flatMap((peer) => {
        const where =
          peer.ipBlock?.cidr ??
          `${Object.values(peer.namespaceSelector?.matchLabels ?? {}).join(",")}/${Object.entries(
            peer.podSelector?.matchLabels ?? {},
          )
            .map(([key, value]) => `${key}=${value}`)
            .join(",")}`
        return (rule.ports ?? []).map((port) => `${where} ${port.protocol}/${port.port}`)
      }),
    ),
  )

/** The YAML example of docs/deploy.md that contains `marker`, without the indentation of the list item it is in. */
const deployExample = (marker: string): string => {
  const deployPage = readFileSync(`${repositoryRoot}docs/deploy.md`, "utf8")
  const block = [...deployPage.matchAll(/^( *)```yaml\n([\s\S]*?)^ *```$/gm)].find((match) =>
    match[2]?.includes(marker),
  )
  if (block === undefined) throw new Error(`docs/deploy.md has no YAML example with ${marker}`)
  const indent = block[1]?.length ?? 0
  return (block[2] ?? "")
    .split("\n")
    .map((line) => line.slice(indent))
    .join("\n")
}

const cidrsOf = (policies: ReadonlyArray<Manifest>): ReadonlyArray<string> =>
  policies.flatMap((policy) =>
    (specOf(policy).egress ?? []).flatMap((rule) => (rule.to ?? []).flatMap((peer) => peer.ipBlock?.cidr ?? [])),
  )

const isCidr = (text: string) => {
  const [address, bits] = text.split("/")
  return address !== undefined && isIPv4(address) && bits !== undefined && Number(bits) >= 0 && Number(bits) <= 32
}

describe("deploy/examples/network-policy: NetworkPolicies for gpu-serials' pods", () => {
  const manifests = kustomize("deploy/examples/network-policy")
  const policies = ofKind(manifests, "NetworkPolicy")
  const container = gpuSerialsContainer(deploymentOf(manifests).spec.template.spec)

  it("lets traffic in to the metrics port only, the port the service listens on", () => {
    const ingress = policies.flatMap((policy) => specOf(policy).ingress ?? [])
    expect(ingress).toEqual([{ ports: [{ protocol: "TCP", port: "http" }] }])
    const metricsPort = container.ports?.find((port) => port.name === "http")?.containerPort
    const serverPort = container.env?.find((variable) => variable.name === "SERVER_PORT")?.value
    expect(String(metricsPort)).toBe(serverPort)
    expect(policies.some((policy) => specOf(policy).policyTypes.includes("Ingress"))).toBe(true)
  })

  it("lets traffic out to the cluster DNS and the API server only", () => {
    for (const policy of policies) expect(specOf(policy).policyTypes).toContain("Egress")
    expect([...egressOf(policies)].sort()).toEqual(
      [
        "kube-system/k8s-app=kube-dns TCP/53",
        "kube-system/k8s-app=kube-dns UDP/53",
        "<api-server-address>/32 TCP/443",
        "<api-server-address>/32 TCP/6443",
      ].sort(),
    )
  })

  it("ships the API server's address as a placeholder the API server refuses, not as a guess", () => {
    const cidrs = cidrsOf(policies)
    expect(cidrs.length).toBeGreaterThan(0)
    for (const cidr of cidrs) expect(isCidr(cidr), cidr).toBe(false)
  })

  it("takes the API server's address and the sinks from an overlay, with the examples of docs/deploy.md", () => {
    const overlay = kustomizeOverlay(
      `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/examples/network-policy
  - sinks.yaml
${deployExample("name: gpu-serials-api-server")}`,
      { "sinks.yaml": deployExample("name: gpu-serials-sinks") },
    )
    const overlayPolicies = ofKind(overlay, "NetworkPolicy")
    const podLabels = deploymentOf(overlay).spec.template.metadata.labels
    for (const policy of overlayPolicies) {
      const selector = (policy.spec as { podSelector: { matchLabels: Record<string, string> } }).podSelector
      expect(Object.entries(selector.matchLabels).every(([key, value]) => podLabels[key] === value)).toBe(true)
      expect(policy.metadata.namespace).toBe("gpu-serials")
    }
    const egress = egressOf(overlayPolicies)
    expect(egress).toEqual(expect.arrayContaining(["192.0.2.10/32 TCP/443", "nats/ TCP/4222", "10.20.0.0/16 TCP/5432"]))
    for (const cidr of cidrsOf(overlayPolicies)) expect(isCidr(cidr), cidr).toBe(true)
  })
})
