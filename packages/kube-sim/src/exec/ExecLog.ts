/** One exec session as the API server saw it: who opened it, into which pod, and when (server-side times). */
export interface ExecSession {
  /** The client whose token opened it (`default` for the cluster's own kubeconfig). */
  readonly client: string
  readonly pod: string
  readonly node: string
  /** When the upgrade was accepted, in milliseconds since the epoch. */
  readonly startedAtMs: number
  /** When the socket closed; absent while it is open. */
  readonly endedAtMs?: number
}

/** The exec sessions of the cluster, oldest first, the last `limit` of them kept. */
export class ExecLog {
  private readonly sessions: Array<{ -readonly [K in keyof ExecSession]: ExecSession[K] }> = []
  private readonly limit: number

  constructor(limit = 100_000) {
    this.limit = limit
  }

  /** Records a session opening; the returned function records its end. */
  open(client: string, pod: string, node: string, nowMs: number): (endedAtMs: number) => void {
    const session: { -readonly [K in keyof ExecSession]: ExecSession[K] } = { client, pod, node, startedAtMs: nowMs }
    this.sessions.push(session)
    if (this.sessions.length > this.limit) this.sessions.shift()
    return (endedAtMs) => {
      session.endedAtMs ??= endedAtMs
    }
  }

  entries(): ReadonlyArray<ExecSession> {
    return this.sessions.map((session) => ({ ...session }))
  }
}
