import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ensureHubStream } from "../../src/receiver/nats/HubSources.ts"
import { gpuSerials, repositoryRoot } from "../cli/GpuSerialsCli.ts"
import { natsServerExecutable } from "../exporter/nats/NatsServer.ts"
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

const folder = mkdtempSync(join(tmpdir(), "gpu-serials-hub-example-"))
const servers: Array<ChildProcess> = []

afterAll(async () => {
  for (const server of servers) {
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve))
      server.kill("SIGTERM")
      await exited
    }
  }
  rmSync(folder, { recursive: true, force: true })
})

/** The rendered hub config file, written where `config validate --config` can read it. */
const configFileOf = (manifests: ReadonlyArray<Manifest>, name: string): string => {
  const configMap = ofKind(manifests, "ConfigMap").find((manifest) =>
    manifest.metadata.name.startsWith("gpu-serials-hub-config"),
  )
  const text = configMap === undefined ? undefined : valuesOf(configMap)["hub.yaml"]
  if (text === undefined) throw new Error("no hub.yaml in the hub's ConfigMap")
  const path = join(folder, name)
  writeFileSync(path, text)
  return path
}

const environmentOf = (manifests: ReadonlyArray<Manifest>) => {
  const deployment = deploymentOf(manifests)
  return resolvedEnvironment(
    manifests,
    deployment.metadata.namespace ?? "",
    gpuSerialsContainer(deployment.spec.template.spec),
  )
}

describe("deploy/examples/hub: the hub service", () => {
  const manifests = kustomize("deploy/examples/hub")
  const deployment = deploymentOf(manifests)
  const pod = deployment.spec.template.spec as typeof deployment.spec.template.spec & {
    readonly automountServiceAccountToken?: boolean
  }

  it("has no Kubernetes access at all: no role, no binding, no service account token", () => {
    for (const kind of ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]) {
      expect(ofKind(manifests, kind), kind).toEqual([])
    }
    const account = ofKind(manifests, "ServiceAccount")
    expect(account.map((manifest) => manifest.metadata.name)).toEqual([pod.serviceAccountName])
    expect((account[0] as Manifest & { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(
      false,
    )
    expect(pod.automountServiceAccountToken).toBe(false)
  })

  it("runs one replica, never two at once, from a config file choosing receiver nats and processor fleet", () => {
    expect(deployment.spec.replicas).toBe(1)
    expect((deployment.spec as { strategy?: { type?: string } }).strategy?.type).toBe("Recreate")
    const env = environmentOf(manifests)
    expect(env.GPU_SERIALS_CONFIG).toBe("/etc/gpu-serials/hub.yaml")
    const mount = gpuSerialsContainer(pod).volumeMounts?.find((candidate) => candidate.mountPath === "/etc/gpu-serials")
    expect(mount).toBeDefined()
    const config = readFileSync(configFileOf(manifests, "rendered.yaml"), "utf8")
    expect(config).toMatch(/gpus: \{ receivers: \[nats\], processors: \[fleet\], exporters: \[stdout, nats\] \}/)
  })

  it("ships a placeholder NATS URL the service refuses, naming the key and never its value", () => {
    const run = gpuSerials(["config", "validate", "--config", configFileOf(manifests, "placeholder.yaml")], {
      env: environmentOf(manifests),
    })
    expect(run.status, run.stdout + run.stderr).toBe(2)
    expect(run.stderr).toContain("HUB_NATS_URL: hub NATS URL must be a comma list of nats://host:port servers")
    for (const secret of ofKind(manifests, "Secret")) {
      for (const value of Object.values(valuesOf(secret))) expect(run.stdout + run.stderr).not.toContain(value)
    }
  })

  it("validates once an overlay replaces the Secret, printing no credential", () => {
    const replaced = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/examples/hub
secretGenerator:
  - name: gpu-serials-hub-nats
    namespace: gpu-serials
    behavior: replace
    literals:
      - NATS_URL=nats://hub:Hb7-secret@nats-hub.nats.svc:4222
`)
    const run = gpuSerials(["config", "validate", "--config", configFileOf(replaced, "replaced.yaml")], {
      env: environmentOf(replaced),
    })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain("configuration is valid: cluster fleet, exporters stdout, nats")
    expect(run.stdout + run.stderr).not.toContain("Hb7-secret")
  })
})

/** A loopback port free at the time of asking. */
const freePort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (typeof address !== "object" || address === null) throw new Error("no port")
  return address.port
}

/** Starts nats-server on `config`; resolves once it is ready for clients. */
const startServer = (config: string, name: string): Promise<void> => {
  const file = join(folder, `${name}.conf`)
  writeFileSync(file, config)
  const child = spawn(natsServerExecutable() ?? "nats-server", ["-c", file], { stdio: ["ignore", "pipe", "pipe"] })
  servers.push(child)
  return new Promise((resolve, reject) => {
    let log = ""
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${log.slice(-500)}`)), 20_000)
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString("utf8")
      if (log.includes("Server is ready")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => reject(new Error(`${name} exited ${code}: ${log.slice(-500)}`)))
  })
}

/** Polls `check` every 200 ms until it holds, at most 100 times. */
const eventually = async (check: () => Promise<boolean>) => {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await check().catch(() => false)) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error("condition not reached")
}

describe("deploy/nats: the hub's and a cluster's NATS configs", () => {
  it("link a leaf in domain east to the hub, whose stream sources the leaf's stream by domain", async () => {
    const [hubPort, leafNodePort, leafPort] = [await freePort(), await freePort(), await freePort()]
    const hubConfig = readFileSync(`${repositoryRoot}deploy/nats/hub.conf`, "utf8")
      .replace("listen: 0.0.0.0:4222", `listen: 127.0.0.1:${hubPort}`)
      .replace("listen: 0.0.0.0:7422", `listen: 127.0.0.1:${leafNodePort}`)
      .replace("/data/jetstream", join(folder, "hub-store"))
    const leafConfig = readFileSync(`${repositoryRoot}deploy/nats/leaf.conf`, "utf8")
      .replace("listen: 0.0.0.0:4222", `listen: 127.0.0.1:${leafPort}`)
      .replace("/data/jetstream", join(folder, "leaf-store"))
      .replace("nats-leaf://hub.example.net:7422", `nats-leaf://127.0.0.1:${leafNodePort}`)
      // The test hub has no accounts, as the config's comment allows.
      .replace(/^\s*credentials: .*$/m, "")
    expect(hubConfig).not.toContain("0.0.0.0")
    expect(leafConfig).not.toContain("nats-leaf://hub.example.net")
    await startServer(hubConfig, "hub")
    await startServer(leafConfig, "leaf")

    const leaf = await connect({ servers: `nats://127.0.0.1:${leafPort}` })
    const hub = await connect({ servers: `nats://127.0.0.1:${hubPort}` })
    try {
      const leafManager = await jetstreamManager(leaf)
      await leafManager.streams.add({ name: "GPU_SERIALS", subjects: ["gpu.serials.>"] })
      await jetstream(leaf).publish("gpu.serials.east.node-1.added", "{}", { msgID: "record-1" })
      const hubManager = await jetstreamManager(hub)
      await Effect.runPromise(ensureHubStream(hubManager, "GPU_SERIALS_HUB", "GPU_SERIALS", "gpu.serials", ["east"]))
      await eventually(async () => (await hubManager.streams.info("GPU_SERIALS_HUB")).state.messages === 1)
      const copied = await hubManager.streams.getMessage("GPU_SERIALS_HUB", { seq: 1 })
      expect(copied?.subject).toBe("gpu.serials.east.node-1.added")
    } finally {
      await leaf.close()
      await hub.close()
    }
  }, 60_000)
})
