import { readFile } from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { requestApi } from "../src/ApiRequest.ts"
import { startSimulatedCluster } from "../src/SimulatedCluster.ts"

interface KubeconfigCluster {
  readonly server: string
  readonly "certificate-authority-data"?: string
  readonly "insecure-skip-tls-verify"?: boolean
}

const clusterOf = async (path: string): Promise<KubeconfigCluster | undefined> =>
  (parse(await readFile(path, "utf8")) as { clusters: Array<{ cluster: KubeconfigCluster }> }).clusters[0]?.cluster

describe("the API server's scheme", () => {
  it("is HTTPS by default, its CA in the kubeconfig, every connection a TLS handshake", async () => {
    const cluster = await startSimulatedCluster({ nodes: 1, execLatency: 0 })
    try {
      expect(cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const entry = await clusterOf(cluster.kubeconfigPath)
      expect(entry?.server).toBe(cluster.url)
      expect(entry?.["insecure-skip-tls-verify"]).toBeUndefined()
      expect(Buffer.from(entry?.["certificate-authority-data"] ?? "", "base64").toString()).toBe(
        cluster.certificateAuthority,
      )
      expect((await requestApi(cluster, "/api/v1/nodes")).status).toBe(200)
      expect(cluster.stats().tlsHandshakes).toBe(1)
      const client = await cluster.addClient("replica-a")
      expect((await clusterOf(client.kubeconfigPath))?.["certificate-authority-data"]).toBe(
        entry?.["certificate-authority-data"],
      )
    } finally {
      await cluster.close()
    }
  })

  it("is plain HTTP with insecureHttp, for the rare test that needs it: no CA, TLS verification off", async () => {
    const cluster = await startSimulatedCluster({ nodes: 1, execLatency: 0, insecureHttp: true })
    try {
      expect(cluster.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(cluster.certificateAuthority).toBeUndefined()
      const entry = await clusterOf(cluster.kubeconfigPath)
      expect(entry?.["insecure-skip-tls-verify"]).toBe(true)
      expect(entry?.["certificate-authority-data"]).toBeUndefined()
      expect((await requestApi(cluster, "/api/v1/nodes")).status).toBe(200)
      expect(cluster.stats().tlsHandshakes).toBe(0)
    } finally {
      await cluster.close()
    }
  })
})
