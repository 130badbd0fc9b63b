import { isAbsolute, join } from "node:path"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import { parse } from "yaml"

/** The cluster of a kubeconfig's current context, with file paths made absolute against the file naming them. */
export interface KubeconfigCluster {
  /** The API server URL, without a trailing slash. */
  readonly server: string
  readonly certificateAuthority?: string
  /** Base64 PEM, as the file holds it. */
  readonly certificateAuthorityData?: string
  readonly insecureSkipTlsVerify: boolean
  readonly tlsServerName?: string
  readonly proxyUrl?: string
}

/** The user of a kubeconfig's current context: its static credentials, or the plugin that makes them. */
export interface KubeconfigUser {
  readonly token?: string
  readonly tokenFile?: string
  readonly clientCertificate?: string
  readonly clientCertificateData?: string
  readonly clientKey?: string
  readonly clientKeyData?: string
  readonly username?: string
  readonly password?: string
  /** `as`: the user to impersonate. */
  readonly impersonate?: string
  /** An `exec` credential plugin, as written (run by client-node). */
  readonly exec?: unknown
  /** An `auth-provider` (oidc, gcp, azure), as written (run by client-node). */
  readonly authProvider?: unknown
}

/** What a kubeconfig's current context selects. */
export interface KubeconfigContext {
  readonly name: string
  readonly clusterName: string
  readonly userName: string
  readonly cluster: KubeconfigCluster
  readonly user: KubeconfigUser
}

/** One kubeconfig file's text and where it was read (relative paths inside it are against its folder). */
export interface KubeconfigText {
  readonly path: string
  readonly directory: string
  readonly text: string
}

/**
 * Whether the credentials need more than files and strings: a credential plugin, an auth provider, or a
 * proxy in front of the API server. Those are handled by client-node, loaded only then.
 */
export const needsClientLibrary = (context: KubeconfigContext): boolean =>
  context.user.exec !== undefined || context.user.authProvider !== undefined || context.cluster.proxyUrl !== undefined

interface Named {
  readonly name: string
  readonly body: Readonly<Record<string, unknown>>
  readonly directory: string
}

interface Document {
  readonly currentContext: string | undefined
  readonly clusters: ReadonlyArray<Named>
  readonly contexts: ReadonlyArray<Named>
  readonly users: ReadonlyArray<Named>
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  Predicate.isObject(value) && !Array.isArray(value)

const stringAt = (body: Readonly<Record<string, unknown>>, key: string): string | undefined => {
  const value = body[key]
  return Predicate.isString(value) && value !== "" ? value : undefined
}

/** The named entries of a list (`clusters`, `contexts`, `users`): `{name, <key>: {...}}` each. */
const namedEntries = (
  document: Readonly<Record<string, unknown>>,
  list: string,
  key: string,
  directory: string,
): Result.Result<ReadonlyArray<Named>, string> => {
  const entries = document[list]
  if (entries === undefined || entries === null) return Result.succeed([])
  if (!Array.isArray(entries)) return Result.fail(`${list} is not a list`)
  const named: Array<Named> = []
  for (const [index, entry] of entries.entries()) {
    if (!isRecord(entry) || stringAt(entry, "name") === undefined) {
      return Result.fail(`${list}[${index}] has no name`)
    }
    const body = entry[key] ?? {}
    if (!isRecord(body)) return Result.fail(`${list}[${index}].${key} is not a mapping`)
    named.push({ name: entry.name as string, body, directory })
  }
  return Result.succeed(named)
}

const documentOf = (file: KubeconfigText): Result.Result<Document, string> => {
  let parsed: unknown
  try {
    parsed = parse(file.text)
  } catch {
    return Result.fail(`${file.path} is not valid YAML`)
  }
  if (parsed === null || parsed === undefined) parsed = {}
  if (!isRecord(parsed)) return Result.fail(`${file.path} is not a kubeconfig (not a mapping)`)
  const document = parsed
  const lists = [
    namedEntries(document, "clusters", "cluster", file.directory),
    namedEntries(document, "contexts", "context", file.directory),
    namedEntries(document, "users", "user", file.directory),
  ] as const
  for (const list of lists) {
    if (Result.isFailure(list)) return Result.fail(`${file.path}: ${list.failure}`)
  }
  const [clusters, contexts, users] = lists.map((list) => (Result.isSuccess(list) ? list.success : []))
  return Result.succeed({
    currentContext: stringAt(document, "current-context"),
    clusters: clusters ?? [],
    contexts: contexts ?? [],
    users: users ?? [],
  })
}

/** The first entry of that name across the files, as kubectl merges them. */
const firstNamed = (lists: ReadonlyArray<ReadonlyArray<Named>>, name: string): Named | undefined => {
  for (const list of lists) {
    const found = list.find((entry) => entry.name === name)
    if (found !== undefined) return found
  }
  return undefined
}

const absolute = (directory: string, path: string | undefined): string | undefined =>
  path === undefined || isAbsolute(path) ? path : join(directory, path)

const clusterOf = (entry: Named): Result.Result<KubeconfigCluster, string> => {
  const server = stringAt(entry.body, "server")
  if (server === undefined) return Result.fail(`cluster "${entry.name}" has no server`)
  const certificateAuthority = absolute(entry.directory, stringAt(entry.body, "certificate-authority"))
  const certificateAuthorityData = stringAt(entry.body, "certificate-authority-data")
  const tlsServerName = stringAt(entry.body, "tls-server-name")
  const proxyUrl = stringAt(entry.body, "proxy-url")
  return Result.succeed({
    server: server.replace(/\/+$/, ""),
    insecureSkipTlsVerify: entry.body["insecure-skip-tls-verify"] === true,
    ...(certificateAuthority === undefined ? {} : { certificateAuthority }),
    ...(certificateAuthorityData === undefined ? {} : { certificateAuthorityData }),
    ...(tlsServerName === undefined ? {} : { tlsServerName }),
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
  })
}

const userOf = (entry: Named): KubeconfigUser => {
  const body = entry.body
  const fields: Array<[keyof KubeconfigUser, unknown]> = [
    ["token", stringAt(body, "token")],
    ["tokenFile", absolute(entry.directory, stringAt(body, "tokenFile") ?? stringAt(body, "token-file"))],
    ["clientCertificate", absolute(entry.directory, stringAt(body, "client-certificate"))],
    ["clientCertificateData", stringAt(body, "client-certificate-data")],
    ["clientKey", absolute(entry.directory, stringAt(body, "client-key"))],
    ["clientKeyData", stringAt(body, "client-key-data")],
    ["username", stringAt(body, "username")],
    ["password", stringAt(body, "password")],
    ["impersonate", stringAt(body, "as")],
    ["exec", isRecord(body.exec) ? body.exec : undefined],
    ["authProvider", isRecord(body["auth-provider"]) ? body["auth-provider"] : undefined],
  ]
  return Object.fromEntries(fields.filter(([, value]) => value !== undefined)) as KubeconfigUser
}

/**
 * The current context of one or more kubeconfig files merged as kubectl merges `KUBECONFIG`: the first
 * file that sets `current-context` decides it, and the first file that defines a cluster, context or user
 * name wins. Fails with a sentence naming what is missing; never with a credential.
 */
export const currentContextOf = (files: ReadonlyArray<KubeconfigText>): Result.Result<KubeconfigContext, string> => {
  const documents: Array<Document> = []
  for (const file of files) {
    const document = documentOf(file)
    if (Result.isFailure(document)) return Result.fail(document.failure)
    documents.push(document.success)
  }
  const name = documents.find((document) => document.currentContext !== undefined)?.currentContext
  if (name === undefined) return Result.fail("it names no current context")
  const context = firstNamed(
    documents.map((document) => document.contexts),
    name,
  )
  if (context === undefined) return Result.fail(`its current context "${name}" is not defined`)
  const clusterName = stringAt(context.body, "cluster")
  const clusterEntry =
    clusterName === undefined
      ? undefined
      : firstNamed(
          documents.map((document) => document.clusters),
          clusterName,
        )
  if (clusterEntry === undefined) {
    return Result.fail(`context "${name}" names cluster "${clusterName ?? ""}", which is not defined`)
  }
  const cluster = clusterOf(clusterEntry)
  if (Result.isFailure(cluster)) return Result.fail(cluster.failure)
  const userName = stringAt(context.body, "user") ?? ""
  const userEntry =
    userName === ""
      ? undefined
      : firstNamed(
          documents.map((document) => document.users),
          userName,
        )
  if (userName !== "" && userEntry === undefined) {
    return Result.fail(`context "${name}" names user "${userName}", which is not defined`)
  }
  return Result.succeed({
    name,
    clusterName: clusterEntry.name,
    userName,
    cluster: cluster.success,
    user: userEntry === undefined ? {} : userOf(userEntry),
  })
}
