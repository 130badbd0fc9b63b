import { spawnSync } from "node:child_process"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { parseGoDuration } from "../../src/config/GoDuration.ts"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"

interface Manifest {
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace?: string }
  readonly rules?: ReadonlyArray<{ apiGroups: Array<string>; resources: Array<string>; verbs: Array<string> }>
  readonly spec?: unknown
}

const rendered = (): ReadonlyArray<Manifest> => {
  const run = spawnSync("kubectl", ["kustomize", "deploy/base"], {
    cwd: repositoryRoot,
    encoding: "utf8",
    timeout: 20_000,
  })
  if (run.status !== 0) throw new Error(`kubectl kustomize failed: ${run.stderr}`)
  return parseAllDocuments(run.stdout).map((document) => document.toJS() as Manifest)
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

  it("shuts down within SHUTDOWN_TIMEOUT, well inside the pod's termination grace period", () => {
    const [deployment] = find("Deployment")
    const spec = deployment?.spec as {
      template: {
        spec: {
          terminationGracePeriodSeconds: number
          containers: Array<{ env: Array<{ name: string; value: string }> }>
        }
      }
    }
    const pod = spec.template.spec
    const shutdownTimeout = pod.containers[0]?.env.find((variable) => variable.name === "SHUTDOWN_TIMEOUT")?.value
    const parsed = parseGoDuration(shutdownTimeout ?? "")
    if (Result.isFailure(parsed)) throw new Error(`SHUTDOWN_TIMEOUT is not a duration: ${shutdownTimeout}`)
    expect(parsed.success + 5_000).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds * 1000)
  })
})
