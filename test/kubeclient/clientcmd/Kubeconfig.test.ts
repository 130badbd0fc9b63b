import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  currentContextOf,
  type KubeconfigText,
  needsClientLibrary,
} from "../../../src/kubeclient/clientcmd/Kubeconfig.ts"

const file = (path: string, text: string): KubeconfigText => ({ path, directory: path.replace(/\/[^/]*$/, ""), text })

const one = `
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.pem
    tls-server-name: api.prod
contexts:
- name: prod
  context: {cluster: prod, user: reader, namespace: gpu-operator}
users:
- name: reader
  user:
    token: s3cret-token
    client-certificate: /etc/pki/reader.pem
    client-key: keys/reader.key
    as: auditor
`

const second = `
current-context: dev
clusters:
- name: prod
  cluster: {server: https://shadowed.example}
- name: dev
  cluster: {server: http://127.0.0.1:8080, insecure-skip-tls-verify: true}
contexts:
- name: dev
  context: {cluster: dev, user: dev}
users:
- name: dev
  user: {tokenFile: tokens/dev}
`

const expectContext = (files: ReadonlyArray<KubeconfigText>) => {
  const context = currentContextOf(files)
  if (Result.isFailure(context)) throw new Error(context.failure)
  return context.success
}

const expectProblem = (files: ReadonlyArray<KubeconfigText>) => {
  const context = currentContextOf(files)
  if (Result.isSuccess(context)) throw new Error("expected the kubeconfig to be refused")
  return context.failure
}

describe("currentContextOf", () => {
  it("selects the current context's cluster and user, with paths made absolute against the file", () => {
    const context = expectContext([file("/home/op/.kube/config", one)])
    expect(context).toEqual({
      name: "prod",
      clusterName: "prod",
      userName: "reader",
      cluster: {
        server: "https://10.0.0.1:6443",
        certificateAuthority: "/home/op/.kube/certs/ca.pem",
        insecureSkipTlsVerify: false,
        tlsServerName: "api.prod",
      },
      user: {
        token: "s3cret-token",
        clientCertificate: "/etc/pki/reader.pem",
        clientKey: "/home/op/.kube/keys/reader.key",
        impersonate: "auditor",
      },
    })
    expect(needsClientLibrary(context)).toBe(false)
  })

  it("merges files as kubectl does: the first current-context and the first definition of a name win", () => {
    const first = expectContext([file("/a/config", one), file("/b/config", second)])
    expect(first.name).toBe("prod")
    expect(first.cluster.server).toBe("https://10.0.0.1:6443")
    const withoutCurrent = one.replace("current-context: prod", "")
    const merged = expectContext([file("/a/config", withoutCurrent), file("/b/config", second)])
    expect(merged).toMatchObject({
      name: "dev",
      cluster: { server: "http://127.0.0.1:8080", insecureSkipTlsVerify: true },
      user: { tokenFile: "/b/tokens/dev" },
    })
  })

  it("names what is missing, never a credential", () => {
    const problems = [
      expectProblem([file("/a/config", one.replace("current-context: prod", ""))]),
      expectProblem([file("/a/config", one.replace("current-context: prod", "current-context: staging"))]),
      expectProblem([file("/a/config", one.replace("user: reader,", "user: writer,"))]),
      expectProblem([file("/a/config", one.replace("cluster: prod,", "cluster: east,"))]),
      expectProblem([
        file("/a/config", one.replace("server: https://10.0.0.1:6443/", "insecure-skip-tls-verify: false")),
      ]),
      expectProblem([file("/a/config", "clusters: {prod: 1}\ntoken: s3cret-token")]),
      expectProblem([file("/a/config", "token: [s3cret-token")]),
    ]
    expect(problems).toEqual([
      "it names no current context",
      'its current context "staging" is not defined',
      'context "prod" names user "writer", which is not defined',
      'context "prod" names cluster "east", which is not defined',
      'cluster "prod" has no server',
      "/a/config: clusters is not a list",
      "/a/config is not valid YAML",
    ])
    for (const problem of problems) expect(problem).not.toContain("s3cret")
  })

  it("leaves credential plugins and proxies to the client library", () => {
    const exec = one.replace(
      "token: s3cret-token",
      "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, args: [eks, get-token]}",
    )
    expect(needsClientLibrary(expectContext([file("/a/config", exec)]))).toBe(true)
    const oidc = one.replace("token: s3cret-token", "auth-provider: {name: oidc, config: {idp-issuer-url: x}}")
    expect(needsClientLibrary(expectContext([file("/a/config", oidc)]))).toBe(true)
    const proxied = one.replace("tls-server-name: api.prod", "proxy-url: http://proxy:3128")
    expect(needsClientLibrary(expectContext([file("/a/config", proxied)]))).toBe(true)
  })
})
