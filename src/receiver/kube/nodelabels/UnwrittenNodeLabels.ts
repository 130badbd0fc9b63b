/** How the node labeller's last pass, when it closes, ended. */
export type LastPassEnd =
  /** Every queued node had its one attempt. */
  | "done"
  /** The shutdown budget ran out first. */
  | "timed-out"
  /** The node informer never listed the nodes, so no patch could be computed. */
  | "never-listed"
  /** The term ended without the service stopping (leadership lost): the next leader writes them. */
  | "term-ended"

/** A node whose last attempt failed, and how. */
export interface LastPassFailure {
  readonly kind: string
  readonly message: string
}

/** What the last pass left unwritten: one log line's worth. */
export interface UnwrittenNodeLabels {
  /** Nodes whose labels may not match the inventory. */
  readonly nodes: number
  readonly reason: string
  /** The failure kinds of the last attempts that failed, comma-separated; absent when none failed. */
  readonly kinds?: string
}

/**
 * What the labeller's last pass left unwritten, from how it ended, the nodes still queued or being patched
 * then, and the nodes whose one attempt failed; nothing when every node's labels were written.
 */
export const unwrittenNodeLabels = (pass: {
  readonly end: LastPassEnd
  readonly unfinished: number
  readonly failed: ReadonlyMap<string, LastPassFailure>
  /** The budget the pass had, as a person reads it (`5s`). */
  readonly budget: string
}): UnwrittenNodeLabels | undefined => {
  const nodes = pass.unfinished + pass.failed.size
  if (nodes === 0) return undefined
  const failures = [...pass.failed.values()]
  const kinds = failures.length === 0 ? {} : { kinds: [...new Set(failures.map((failure) => failure.kind))].join(",") }
  switch (pass.end) {
    case "never-listed":
      return { nodes, reason: "the node informer never listed the nodes", ...kinds }
    case "term-ended":
      return {
        nodes,
        reason: "the term ended without a shutdown (leadership lost): the next leader or start writes them",
        ...kinds,
      }
    case "timed-out":
      return { nodes, reason: `the shutdown budget (${pass.budget}) ran out`, ...kinds }
    case "done":
      return { nodes, reason: `the last attempt failed: ${failures.at(-1)?.message ?? "unknown"}`, ...kinds }
  }
}
