/** How often a node may log the same failure kind, and how many nodes are remembered. */
export interface FailingNodesOptions {
  /** A node logs the same failure kind at most once in this interval. */
  readonly repeatLogIntervalMs: number
  readonly maxNodes: number
}

export const defaultFailingNodesOptions: FailingNodesOptions = {
  repeatLogIntervalMs: 10 * 60 * 1000,
  maxNodes: 20_000,
}

/** Whether a failure is logged now and how many repeats of it were held back since its last line. */
export type FailureLogDecision = { readonly _tag: "Log"; readonly suppressed: number } | { readonly _tag: "Suppressed" }

/** How the nodes read so far stand, for the `readings` readiness verdict. */
export interface ReadingsSummary {
  readonly everSucceeded: boolean
  readonly everFailed: boolean
  /** Nodes whose last reading succeeded. */
  readonly succeeding: number
  /** Nodes with a last reading, good or failed. */
  readonly judged: number
  /** Nodes whose last reading failed, by failure kind. */
  readonly failingByKind: ReadonlyMap<string, number>
}

interface LoggedKind {
  at: number
  suppressed: number
}

interface NodeState {
  /** Whether the node has had a reading (the fields below are its standing); not before its first. */
  judged: boolean
  /** The kind of the node's last reading when it failed; `undefined` when it succeeded. */
  failing: string | undefined
  /** When each failure kind last logged; made at the node's first failure, as most nodes never fail. */
  logged: Map<string, LoggedKind> | undefined
}

/**
 * What the receiver remembers of failed readings, without waiting or time of its own (callers pass the
 * clock): which nodes fail now and with which kind, whether a reading ever failed or succeeded, and when
 * each node last logged each kind, so a node that keeps failing the same way logs one line per interval
 * with the count of the repeats it held back. Bounded: a deleted node is forgotten, and beyond `maxNodes`
 * the node remembered longest is dropped.
 */
export class FailingNodes {
  private readonly nodes = new Map<string, NodeState>()
  private readonly failing = new Map<string, number>()
  private succeeding = 0
  private readonly options: FailingNodesOptions
  private everSucceeded = false
  private everFailed = false

  constructor(options: FailingNodesOptions = defaultFailingNodesOptions) {
    this.options = options
  }

  /** A reading of `node` failed for good with `kind` at `nowMillis`: whether to log it. */
  failed(node: string, kind: string, nowMillis: number): FailureLogDecision {
    this.everFailed = true
    const state = this.stateOf(node)
    this.count(state, -1)
    state.judged = true
    state.failing = kind
    this.count(state, 1)
    state.logged ??= new Map()
    const logged = state.logged.get(kind)
    if (logged !== undefined && nowMillis - logged.at < this.options.repeatLogIntervalMs) {
      logged.suppressed++
      return { _tag: "Suppressed" }
    }
    state.logged.set(kind, { at: nowMillis, suppressed: 0 })
    return { _tag: "Log", suppressed: logged?.suppressed ?? 0 }
  }

  /** A reading of `node` succeeded: the kind it recovered from, when its previous reading had failed. */
  succeeded(node: string): string | undefined {
    this.everSucceeded = true
    const state = this.stateOf(node)
    this.count(state, -1)
    const recoveredFrom = state.failing
    state.judged = true
    state.failing = undefined
    this.count(state, 1)
    return recoveredFrom
  }

  /** The node left the cluster. */
  forget(node: string): void {
    const state = this.nodes.get(node)
    if (state === undefined) return
    this.count(state, -1)
    this.nodes.delete(node)
  }

  /** Nodes whose last reading failed, by kind. */
  failingByKind(): ReadonlyMap<string, number> {
    return this.failing
  }

  summary(): ReadingsSummary {
    let failing = 0
    for (const count of this.failing.values()) failing += count
    return {
      everSucceeded: this.everSucceeded,
      everFailed: this.everFailed,
      succeeding: this.succeeding,
      judged: this.succeeding + failing,
      failingByKind: new Map(this.failing),
    }
  }

  get size(): number {
    return this.nodes.size
  }

  private stateOf(node: string): NodeState {
    const known = this.nodes.get(node)
    if (known !== undefined) return known
    const state: NodeState = { judged: false, failing: undefined, logged: undefined }
    this.remember(node, state)
    return state
  }

  private remember(node: string, state: NodeState): void {
    while (this.nodes.size >= this.options.maxNodes) {
      const oldest = this.nodes.keys().next()
      if (oldest.done === true) break
      this.forget(oldest.value)
    }
    this.nodes.set(node, state)
  }

  /** Adds `delta` to the tally of the node's current standing: succeeding, or failing with its kind. */
  private count(state: NodeState, delta: 1 | -1): void {
    if (!state.judged) return
    if (state.failing === undefined) {
      this.succeeding += delta
      return
    }
    const count = (this.failing.get(state.failing) ?? 0) + delta
    if (count > 0) this.failing.set(state.failing, count)
    else this.failing.delete(state.failing)
  }
}
