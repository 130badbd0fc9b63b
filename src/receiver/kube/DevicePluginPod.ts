import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PodRef } from "../../domain/NodeObservation.ts"
import { isPodReady } from "./PodReadiness.ts"

/** A field the API server may leave out, send as null, or that client-node leaves undefined. */
const absentOr = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

const PodFields = Schema.Struct({
  metadata: Schema.Struct({
    name: Schema.String,
    namespace: absentOr(Schema.String),
    uid: absentOr(Schema.String),
    resourceVersion: absentOr(Schema.String),
    deletionTimestamp: absentOr(Schema.Unknown),
  }),
  spec: absentOr(Schema.Struct({ nodeName: absentOr(Schema.String) })),
  status: absentOr(
    Schema.Struct({
      phase: absentOr(Schema.String),
      containerStatuses: absentOr(Schema.Array(Schema.Struct({ ready: Schema.Boolean }))),
    }),
  ),
})

const decodePod = Schema.decodeUnknownOption(PodFields)

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

/** Reads a pod from a list or a watch event; `undefined` when the object is not a pod. */
export const devicePluginPodOf = (object: unknown): DevicePluginPod | undefined => {
  const decoded = decodePod(object)
  if (Option.isNone(decoded)) {
    return undefined
  }
  const { metadata, spec, status } = decoded.value
  const namespace = metadata.namespace ?? ""
  return {
    key: podKeyOf(namespace, metadata.name),
    namespace,
    name: metadata.name,
    uid: metadata.uid ?? "",
    nodeName: spec?.nodeName ?? "",
    resourceVersion: metadata.resourceVersion ?? "",
    ready: isPodReady({
      metadata: { deletionTimestamp: metadata.deletionTimestamp ?? undefined },
      status: {
        phase: status?.phase ?? undefined,
        containerStatuses: status?.containerStatuses ?? undefined,
      },
    }),
  }
}

export const podRefOf = (pod: DevicePluginPod): PodRef => ({ namespace: pod.namespace, name: pod.name })
