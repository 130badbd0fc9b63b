/** Credentials written in a server URL: `nats://user:password@host` or `nats://token@host`. */
export interface NatsUrlCredentials {
  readonly user: string
  /** Absent for `nats://token@host`, where the user part is a token, as the NATS Go client reads it. */
  readonly password?: string
}

/** A `NATS_URL` server list with the credentials taken out of its URLs. */
export interface NatsServerList {
  /** The servers without userinfo: nats.js would ignore it, and it must not travel further. */
  readonly servers: ReadonlyArray<string>
  /** The distinct credentials the servers carried, in order (more than one is a configuration error). */
  readonly credentials: ReadonlyArray<NatsUrlCredentials>
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i

const decoded = (component: string): string => {
  try {
    return decodeURIComponent(component)
  } catch {
    return component
  }
}

/** One server: its URL without userinfo and the credentials that were in it. */
const splitServer = (server: string): { readonly server: string; readonly credentials?: NatsUrlCredentials } => {
  const scheme = SCHEME.exec(server)?.[0] ?? ""
  const rest = server.slice(scheme.length)
  const queryAt = rest.search(/[?#]/)
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt)
  // The last `@` before the query ends the userinfo, as URL parsers read a password holding `@`.
  const at = beforeQuery.lastIndexOf("@")
  if (at === -1) return { server }
  const userinfo = beforeQuery.slice(0, at)
  const colon = userinfo.indexOf(":")
  const credentials =
    colon === -1
      ? { user: decoded(userinfo) }
      : { user: decoded(userinfo.slice(0, colon)), password: decoded(userinfo.slice(colon + 1)) }
  return { server: `${scheme}${rest.slice(at + 1)}`, credentials }
}

/** Reads a comma list of servers (`nats://`, `tls://`, `ws://`, `wss://` URLs or `host:port`). */
export const natsServerList = (text: string): NatsServerList => {
  const split = text.split(",").map((server) => splitServer(server.trim()))
  const credentials: Array<NatsUrlCredentials> = []
  for (const { credentials: found } of split) {
    if (found === undefined) continue
    const known = credentials.some((seen) => seen.user === found.user && seen.password === found.password)
    if (!known) credentials.push(found)
  }
  return { servers: split.map(({ server }) => server), credentials }
}
