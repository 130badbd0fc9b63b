import type { ApiRequestFacts } from "./ApiServer.ts"
import { type ApiError, forbidden } from "./ApiStatus.ts"

/** Requests a denial applies to; every given field must match. */
export interface AccessDenial {
  /** The client denied (`cluster.addClient(name)`); every client when absent. */
  readonly client?: string
  readonly verb?: string
  readonly resource?: string
  readonly subresource?: string
  readonly namespace?: string
}

/**
 * The simulated cluster's RBAC: everything is allowed until a test denies some requests, which are then
 * answered 403 Forbidden the way the API server's authorizer answers them, before the object is looked up.
 */
export class AccessRules {
  private denials: Array<AccessDenial> = []
  private readonly user: string

  constructor(user: string) {
    this.user = user
  }

  deny(denial: AccessDenial): void {
    this.denials.push(denial)
  }

  allowAll(): void {
    this.denials = []
  }

  refusal(facts: ApiRequestFacts): ApiError | undefined {
    const denied = this.denials.some(
      (denial) =>
        (denial.client === undefined || denial.client === facts.client) &&
        (denial.verb === undefined || denial.verb === facts.verb) &&
        (denial.resource === undefined || denial.resource === facts.resource) &&
        (denial.subresource === undefined || denial.subresource === facts.subresource) &&
        (denial.namespace === undefined || denial.namespace === facts.namespace),
    )
    return denied
      ? forbidden(this.user, facts.verb, facts.resource, facts.subresource, facts.namespace, facts.name, facts.group)
      : undefined
  }
}
