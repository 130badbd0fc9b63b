import { randomBytes } from "node:crypto"
import { ApiError } from "./ApiStatus.ts"

/** The client a request without credentials is taken for: kubectl sends no bearer token over plain http. */
export const anonymousClient = "anonymous"

/** The client of the cluster's own kubeconfig. */
export const defaultClient = "default"

/**
 * The bearer tokens the API server knows, one per client, so faults and the exec log can tell the
 * replicas of a service apart. A wrong token is 401, as the API server's authenticator answers it.
 */
export class ApiClients {
  private readonly byToken = new Map<string, string>()

  constructor(defaultToken: string) {
    this.byToken.set(defaultToken, defaultClient)
  }

  /** Registers a client under a fresh token and returns the token; a name is registered once. */
  add(name: string): string {
    if ([...this.byToken.values()].includes(name)) throw new RangeError(`client "${name}" already exists`)
    const token = randomBytes(24).toString("base64url")
    this.byToken.set(token, name)
    return token
  }

  /** The client a request's `Authorization` header names. */
  identify(authorization: string | undefined): string {
    if (authorization === undefined) return anonymousClient
    const name = authorization.startsWith("Bearer ")
      ? this.byToken.get(authorization.slice("Bearer ".length))
      : undefined
    if (name === undefined) throw new ApiError(401, "Unauthorized", "Unauthorized")
    return name
  }
}
