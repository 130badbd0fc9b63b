import type { PodRef } from "../../domain/NodeObservation.ts"
import { arrayField, type Field, type Fields, invalid, objectField, stringField } from "./ObjectFields.ts"
import { isPodReady } from "./PodReadiness.ts"

/** What the receiver keeps of a device-plugin pod: where it runs and whether it can be read now. */
export interface DevicePluginPod {
  /** `namespace/name`, the work-queue key. */
  readonly key: string
  readonly namespace: string
  readonly name: string
  readonly uid: string
  /** Empty while the pod is not scheduled. */
  readonly nodeName: string
  readonly resourceVersion: string
  /** Running, not being deleted, every container ready. */
  readonly ready: boolean
}

export const podKeyOf = (namespace: string, name: string): string => `${namespace}/${name}`

/** A container status's `ready`, the only part of it kept. */
const containerReady = (status: unknown): { readonly ready: boolean } | typeof invalid => {
  const fields = objectField(status)
  return fields === undefined || fields === invalid || typeof fields.ready !== "boolean"
    ? invalid
    : { ready: fields.ready }
}

/** The status fields readiness is judged from. */
const statusOf = (
  status: Fields | undefined,
): { readonly phase: Field<string>; readonly containerStatuses: Field<Array<{ readonly ready: boolean }>> } => {
  if (status === undefined) return { phase: undefined, containerStatuses: undefined }
  return { phase: stringField(status.phase), containerStatuses: arrayField(status.containerStatuses, containerReady) }
}

/**
 * Reads a pod from a list or a watch event; `undefined` when the object is not a pod (no name, or a kept
 * field of the wrong type).
 */
export const devicePluginPodOf = (object: unknown): DevicePluginPod | undefined => {
  const pod = objectField(object)
  if (pod === undefined || pod === invalid) return undefined
  const metadata = objectField(pod.metadata)
  if (metadata === undefined || metadata === invalid || typeof metadata.name !== "string") return undefined
  const namespaceField = stringField(metadata.namespace)
  const uid = stringField(metadata.uid)
  const resourceVersion = stringField(metadata.resourceVersion)
  const spec = objectField(pod.spec)
  const nodeName = spec === undefined || spec === invalid ? spec : stringField(spec.nodeName)
  const statusFields = objectField(pod.status)
  if (statusFields === invalid) return undefined
  const { phase, containerStatuses } = statusOf(statusFields)
  if (
    namespaceField === invalid ||
    uid === invalid ||
    resourceVersion === invalid ||
    nodeName === invalid ||
    phase === invalid ||
    containerStatuses === invalid
  ) {
    return undefined
  }
  const namespace = namespaceField ?? ""
  return {
    key: podKeyOf(namespace, metadata.name),
    namespace,
    name: metadata.name,
    uid: uid ?? "",
    nodeName: nodeName ?? "",
    resourceVersion: resourceVersion ?? "",
    ready: isPodReady({
      metadata: { deletionTimestamp: metadata.deletionTimestamp ?? undefined },
      status: { phase, containerStatuses },
    }),
  }
}

export const podRefOf = (pod: DevicePluginPod): PodRef => ({ namespace: pod.namespace, name: pod.name })
