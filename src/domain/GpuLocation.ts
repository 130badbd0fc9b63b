import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { chassisOf, type KnownGpu } from "./KnownGpu.ts"
import type { RecordValues } from "./KnownGpuOfRecord.ts"
import { StoredGpu, StoredHealth } from "./StoredGpu.ts"

/** Where a GPU is now, as the KV bucket keeps it under its uuid and under its serial. */
export const GpuLocation = Schema.Struct({
  uuid: Schema.String,
  /** Empty when the GPU reports no serial. */
  serial: Schema.String,
  cluster: Schema.String,
  node: Schema.String,
  machine: Schema.String,
  /** Empty when the GPU has no chassis. */
  chassis: Schema.String,
  /** RFC 3339 time the GPU was first seen at this node and machine. */
  since: Schema.String,
  /** RFC 3339 time of the last reading that reported the GPU. */
  lastSeen: Schema.String,
  /** The GPU's last health verdict; absent when no reading told it. */
  health: Schema.optionalKey(StoredHealth),
})
export type GpuLocation = typeof GpuLocation.Type

const optionalString = Schema.optionalKey(Schema.String)

/**
 * The value under `<cluster>.uuid.<uuid>`: the location plus what the inventory needs to carry on after a
 * restart (the GPU as last read, the pod that read it, versions, and its report times).
 */
export const LocatedGpu = Schema.Struct({
  ...GpuLocation.fields,
  nodeUid: optionalString,
  providerId: optionalString,
  pod: Schema.Struct({ namespace: Schema.String, name: Schema.String }),
  gpu: StoredGpu,
  driverVersion: optionalString,
  cudaVersion: optionalString,
  serialShared: Schema.Boolean,
  firstSeen: Schema.String,
  lastReported: Schema.String,
})
export type LocatedGpu = typeof LocatedGpu.Type

const decodeLocated = Schema.decodeUnknownOption(Schema.fromJsonString(LocatedGpu))
const decodeLocation = Schema.decodeUnknownOption(Schema.fromJsonString(GpuLocation))

/** A `uuid.` entry's JSON; absent when it is not one. */
export const parseLocatedGpu = (json: string): LocatedGpu | undefined => Option.getOrUndefined(decodeLocated(json))

/** A location entry's JSON (either key kind); absent when it is not one. */
export const parseGpuLocation = (json: string): GpuLocation | undefined => Option.getOrUndefined(decodeLocation(json))

/** The location part of an entry, as the `serial.` key keeps it. */
export const locationOf = (located: LocatedGpu): GpuLocation => ({
  uuid: located.uuid,
  serial: located.serial,
  cluster: located.cluster,
  node: located.node,
  machine: located.machine,
  chassis: located.chassis,
  since: located.since,
  lastSeen: located.lastSeen,
  ...(located.health === undefined ? {} : { health: located.health }),
})

/**
 * A known GPU as its `uuid.` entry in `cluster`; `since` is kept from the previous entry when the GPU
 * is still at the same node and machine, else it is the time of the reading that found it there.
 */
export const locatedGpu = (known: KnownGpu, cluster: string, previous: LocatedGpu | undefined): LocatedGpu => {
  const stayed =
    previous !== undefined &&
    previous.cluster === cluster &&
    previous.node === known.node &&
    previous.machine === known.machine
  return {
    uuid: known.uuid,
    serial: known.gpu.serial ?? "",
    cluster,
    node: known.node,
    machine: known.machine,
    chassis: chassisOf(known),
    since: stayed ? previous.since : known.lastSeen.toISOString(),
    lastSeen: known.lastSeen.toISOString(),
    ...(known.health === undefined ? {} : { health: known.health }),
    ...(known.nodeUid === undefined ? {} : { nodeUid: known.nodeUid }),
    ...(known.providerId === undefined ? {} : { providerId: known.providerId }),
    pod: { namespace: known.pod.namespace, name: known.pod.name },
    gpu: known.gpu,
    ...(known.driverVersion === undefined ? {} : { driverVersion: known.driverVersion }),
    ...(known.cudaVersion === undefined ? {} : { cudaVersion: known.cudaVersion }),
    serialShared: known.serialShared,
    firstSeen: known.firstSeen.toISOString(),
    lastReported: known.lastReported.toISOString(),
  }
}

/**
 * The known GPU an entry stands for, as the inventory loads it; `values` keeps the texts, times and pods
 * many entries repeat once (a hub reading every cluster's entries).
 */
export const knownGpuOf = (located: LocatedGpu, values?: RecordValues): KnownGpu => {
  const text = (value: string) => (values === undefined ? value : values.text(value))
  const time = (value: string) => (values === undefined ? new Date(value) : values.time(value))
  const { namespace, name } = located.pod
  return {
    uuid: located.uuid,
    node: text(located.node),
    ...(located.nodeUid === undefined ? {} : { nodeUid: located.nodeUid }),
    ...(located.providerId === undefined ? {} : { providerId: text(located.providerId) }),
    machine: text(located.machine),
    pod: values === undefined ? located.pod : values.pod(namespace === "" ? name : `${namespace}/${name}`),
    gpu: located.gpu,
    ...(located.driverVersion === undefined ? {} : { driverVersion: text(located.driverVersion) }),
    ...(located.cudaVersion === undefined ? {} : { cudaVersion: text(located.cudaVersion) }),
    serialShared: located.serialShared,
    ...(located.health === undefined ? {} : { health: located.health }),
    firstSeen: time(located.firstSeen),
    lastSeen: time(located.lastSeen),
    lastReported: time(located.lastReported),
  }
}
