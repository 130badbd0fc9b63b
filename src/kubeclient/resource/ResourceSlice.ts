import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * `resource.k8s.io` ResourceSlices as a reader needs them: the driver, node and pool of a slice and its
 * devices' attributes, read from v1 and v1beta2 (flat devices) and v1beta1 (attributes under
 * `devices[].basic`). The apiserver serves the same object through every version it offers.
 */

/** The API versions of `resource.k8s.io` a reader takes, the preferred first (v1 is GA since Kubernetes 1.34). */
export const resourceSliceVersions = ["v1", "v1beta2", "v1beta1"] as const
export type ResourceSliceVersion = (typeof resourceSliceVersions)[number]

export const resourceGroup = "resource.k8s.io"

/** The collection path of ResourceSlices (cluster-scoped) in one API version. */
export const resourceSlicesPath = (version: ResourceSliceVersion): string =>
  `/apis/${resourceGroup}/${version}/resourceslices`

/** The first version of `resourceSliceVersions` the server offers, from `GET /apis/resource.k8s.io`. */
export const preferredSliceVersion = (served: ReadonlyArray<string>): ResourceSliceVersion | undefined =>
  resourceSliceVersions.find((version) => served.includes(version))

/** One attribute value: exactly one of the typed fields is set (`version` is a semantic version string). */
export interface DeviceAttribute {
  readonly string?: string
  readonly int?: number
  readonly bool?: boolean
  readonly version?: string
}

export interface SliceDevice {
  readonly name: string
  /** By qualified name as stored (`uuid`, `resource.kubernetes.io/pciBusID`). */
  readonly attributes: Readonly<Record<string, DeviceAttribute>>
}

export interface ResourcePool {
  readonly name: string
  readonly generation: number
  readonly resourceSliceCount: number
}

/** What a reader keeps of a ResourceSlice. */
export interface ResourceSlice {
  /** `metadata.name`: slices are cluster-scoped. */
  readonly key: string
  readonly resourceVersion: string
  readonly driver: string
  /** Empty for a slice not bound to one node. */
  readonly nodeName: string
  readonly pool: ResourcePool
  readonly devices: ReadonlyArray<SliceDevice>
}

const absentOr = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

const Attribute = Schema.Struct({
  string: absentOr(Schema.String),
  int: absentOr(Schema.Number),
  bool: absentOr(Schema.Boolean),
  version: absentOr(Schema.String),
})
const Attributes = absentOr(Schema.Record(Schema.String, Attribute))

const SliceFields = Schema.Struct({
  metadata: Schema.Struct({ name: Schema.String, resourceVersion: absentOr(Schema.String) }),
  spec: Schema.Struct({
    driver: Schema.String,
    nodeName: absentOr(Schema.String),
    pool: Schema.Struct({
      name: Schema.String,
      generation: absentOr(Schema.Number),
      resourceSliceCount: absentOr(Schema.Number),
    }),
    devices: absentOr(
      Schema.Array(
        Schema.Struct({
          name: Schema.String,
          attributes: Attributes,
          basic: absentOr(Schema.Struct({ attributes: Attributes })),
        }),
      ),
    ),
  }),
})

const decodeSlice = Schema.decodeUnknownOption(SliceFields)

type DecodedAttribute = typeof Attribute.Type

const attributeOf = (value: DecodedAttribute): DeviceAttribute => ({
  ...(typeof value.string === "string" ? { string: value.string } : {}),
  ...(typeof value.int === "number" ? { int: value.int } : {}),
  ...(typeof value.bool === "boolean" ? { bool: value.bool } : {}),
  ...(typeof value.version === "string" ? { version: value.version } : {}),
})

const attributesOf = (
  attributes: Readonly<Record<string, DecodedAttribute>> | null | undefined,
): Readonly<Record<string, DeviceAttribute>> => {
  const result: Record<string, DeviceAttribute> = {}
  for (const [name, value] of Object.entries(attributes ?? {})) result[name] = attributeOf(value)
  return result
}

/** Reads a slice from a list or a watch event, in any served version; `undefined` when it is not a slice. */
export const resourceSliceOf = (object: unknown): ResourceSlice | undefined => {
  const decoded = decodeSlice(object)
  if (Option.isNone(decoded)) return undefined
  const { metadata, spec } = decoded.value
  return {
    key: metadata.name,
    resourceVersion: metadata.resourceVersion ?? "",
    driver: spec.driver,
    nodeName: spec.nodeName ?? "",
    pool: {
      name: spec.pool.name,
      generation: spec.pool.generation ?? 0,
      resourceSliceCount: spec.pool.resourceSliceCount ?? 1,
    },
    devices: (spec.devices ?? []).map((device) => ({
      name: device.name,
      // v1beta1 nests the attributes under `basic`; v1 and v1beta2 keep them on the device.
      attributes: attributesOf(device.attributes ?? device.basic?.attributes),
    })),
  }
}

/**
 * The slices of a pool a reader should consider: those of its highest generation (older ones are being
 * replaced), and whether the pool is complete (as many slices as `resourceSliceCount` says).
 */
export const currentPoolSlices = (
  slices: Iterable<ResourceSlice>,
): { readonly slices: ReadonlyArray<ResourceSlice>; readonly generation: number; readonly complete: boolean } => {
  let generation = Number.NEGATIVE_INFINITY
  let current: Array<ResourceSlice> = []
  for (const slice of slices) {
    if (slice.pool.generation > generation) {
      generation = slice.pool.generation
      current = [slice]
    } else if (slice.pool.generation === generation) {
      current.push(slice)
    }
  }
  const expected = current[0]?.pool.resourceSliceCount ?? 0
  return {
    slices: current,
    generation: current.length === 0 ? 0 : generation,
    complete: current.length > 0 && current.length >= expected,
  }
}
