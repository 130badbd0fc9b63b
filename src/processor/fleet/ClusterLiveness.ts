/**
 * When the hub last heard of each cluster (a heartbeat or any record), and which clusters it has not heard
 * of for longer than `STALE_AFTER`. A cluster the hub never heard of is stale from its start, until the
 * first word. Plain data; time comes as `now`.
 */
export interface ClusterLiveness {
  /** Epoch milliseconds of the last word, by cluster. */
  readonly lastHeard: Map<string, number>
  /** When the hub started listening: a cluster never heard of is counted from then. */
  readonly since: number
}

export const startLiveness = (now: Date): ClusterLiveness => ({ lastHeard: new Map(), since: now.getTime() })

/** Notes a word of `cluster` at `time`; an older word than the last one changes nothing. */
export const heard = (liveness: ClusterLiveness, cluster: string, time: Date): void => {
  const previous = liveness.lastHeard.get(cluster)
  if (previous === undefined || time.getTime() > previous) liveness.lastHeard.set(cluster, time.getTime())
}

/** The clusters of `clusters` not heard of for longer than `staleAfterMs` at `now`, in the given order. */
export const staleClusters = (
  liveness: ClusterLiveness,
  clusters: ReadonlyArray<string>,
  now: Date,
  staleAfterMs: number,
): ReadonlyArray<string> =>
  clusters.filter((cluster) => now.getTime() - (liveness.lastHeard.get(cluster) ?? liveness.since) > staleAfterMs)
