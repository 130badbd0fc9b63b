/** The parts of a pod its readiness is judged from; a client-node `V1Pod` and a watched pod both fit. */
export interface PodReadinessFacts {
  readonly metadata?: { readonly deletionTimestamp?: unknown } | undefined
  readonly status?:
    | {
        readonly phase?: string | undefined
        readonly containerStatuses?: ReadonlyArray<{ readonly ready: boolean }> | undefined
      }
    | undefined
}

/**
 * A device-plugin pod is read only when it is Running, not being deleted, and every one of its containers
 * reports ready: before that nvidia-smi may not be there yet, after it the container is going away.
 */
export const isPodReady = (pod: PodReadinessFacts): boolean => {
  const status = pod.status
  if (status?.phase !== "Running") {
    return false
  }
  const deletion = pod.metadata?.deletionTimestamp
  if (deletion !== undefined && deletion !== null) {
    return false
  }
  const containers = status.containerStatuses ?? []
  return containers.length > 0 && containers.every((container) => container.ready === true)
}
