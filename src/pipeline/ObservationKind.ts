/**
 * What a pipeline's receiver passes its processor: `node` observations of one cluster (`NodeObservation`,
 * the `kube_exec` receiver to the `inventory` processor) or `cluster` observations of a hub
 * (`ClusterObservation`, the `nats` receiver to the `fleet` processor). A receiver and a processor pair
 * only when they pass the same kind.
 */
export type ObservationKind = "node" | "cluster"

/** The kind a receiver or processor type declares; those that declare none pass node observations. */
export const observationKindOf = (component: { readonly observes?: ObservationKind }): ObservationKind =>
  component.observes ?? "node"
