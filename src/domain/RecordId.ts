import { createHash } from "node:crypto"

/** The facts that make one event of one reading unique; the same facts always give the same id. */
export interface RecordIdentity {
  readonly cluster: string
  readonly uuid: string
  readonly event: string
  readonly node: string
  readonly machine: string
  readonly time: string
}

/** 32 hex characters of SHA-256: an idempotency key for JetStream, HTTP and Postgres sinks. */
export const recordId = (identity: RecordIdentity): string =>
  createHash("sha256")
    .update(
      [identity.cluster, identity.uuid, identity.event, identity.node, identity.machine, identity.time].join("\u001f"),
    )
    .digest("hex")
    .slice(0, 32)
