/** A node of a named cluster, the other end of a board's move between clusters. */
export interface BoardPlace {
  readonly cluster: string
  readonly node: string
  /** The node's `spec.providerID`, empty for a bare-metal node registered without one. */
  readonly providerId: string
}
