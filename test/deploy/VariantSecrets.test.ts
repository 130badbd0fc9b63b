import { describe, expect, it } from "vitest"
import { gpuSerials } from "../cli/GpuSerialsCli.ts"
import {
  deploymentOf,
  gpuSerialsContainer,
  kustomize,
  kustomizeOverlay,
  type Manifest,
  ofKind,
  resolvedEnvironment,
  valuesOf,
} from "./RenderedManifests.ts"

/** The environment the variant's gpu-serials container gets, its Secrets' values included. */
const serviceEnvironment = (manifests: ReadonlyArray<Manifest>): Readonly<Record<string, string>> => {
  const deployment = deploymentOf(manifests)
  return resolvedEnvironment(
    manifests,
    deployment.metadata.namespace ?? "",
    gpuSerialsContainer(deployment.spec.template.spec),
  )
}

const secretValues = (manifests: ReadonlyArray<Manifest>): ReadonlyArray<string> =>
  ofKind(manifests, "Secret").flatMap((secret) => Object.values(valuesOf(secret)))

const variants = [
  {
    name: "nats",
    secret: "gpu-serials-nats",
    key: "NATS_URL",
    message: "NATS_URL: NATS URL must be a comma list of nats://host:port servers",
    replacement: "nats://gpu-serials:Xq7%40secret@nats.nats.svc:4222",
    password: "Xq7%40secret",
  },
  {
    name: "postgres",
    secret: "gpu-serials-postgres",
    key: "POSTGRES_URL",
    message: "POSTGRES_URL: postgres URL must be a postgres:// or postgresql:// URL",
    replacement: "postgres://gpu_serials:Pg9-secret@postgres.db.svc:5432/inventory?sslmode=verify-full",
    password: "Pg9-secret",
  },
] as const

describe.each(variants)("deploy/examples/$name: endpoint and credentials from a Secret", (variant) => {
  const manifests = kustomize(`deploy/examples/${variant.name}`)

  it(`reads ${variant.key} from the Secret, never from the manifest`, () => {
    const env = gpuSerialsContainer(deploymentOf(manifests).spec.template.spec).env ?? []
    const variable = env.find((candidate) => candidate.name === variant.key)
    expect(variable?.value).toBeUndefined()
    expect(variable?.valueFrom?.secretKeyRef?.name).toMatch(new RegExp(`^${variant.secret}(-[a-z0-9]+)?$`))
    expect(variable?.valueFrom?.secretKeyRef?.key).toBe(variant.key)
  })

  it("ships a placeholder the service refuses: config validate exits 2 naming the key, never its value", () => {
    const run = gpuSerials(["config", "validate"], { env: serviceEnvironment(manifests) })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(variant.message)
    const output = run.stdout + run.stderr
    const values = secretValues(manifests)
    expect(values.length).toBeGreaterThan(0)
    for (const value of values) expect(output).not.toContain(value)
  })

  it("runs once an overlay replaces the Secret as docs/deploy.md shows, printing no credential", () => {
    const replaced = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/examples/${variant.name}
secretGenerator:
  - name: ${variant.secret}
    namespace: gpu-serials
    behavior: replace
    literals:
      - ${variant.key}=${variant.replacement}
`)
    expect(ofKind(replaced, "Secret")).toHaveLength(1)
    const env = serviceEnvironment(replaced)
    expect(env[variant.key]).toBe(variant.replacement)
    const run = gpuSerials(["config", "validate"], { env })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain(`exporters ${variant.name}`)
    expect(run.stdout + run.stderr).not.toContain(variant.password)
  })
})
