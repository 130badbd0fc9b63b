import * as Schema from "effect/Schema"

const optionalString = Schema.optionalKey(Schema.String)

/**
 * A GPU as last read, as a durable store keeps it (JSON in a KV value or a `jsonb` column), so the
 * inventory can carry on with it after a restart.
 */
export const StoredGpu = Schema.Struct({
  index: Schema.Number,
  uuid: Schema.String,
  serial: optionalString,
  product: optionalString,
  pciBusId: optionalString,
  moduleId: Schema.optionalKey(Schema.Number),
  migMode: optionalString,
  platform: Schema.optionalKey(
    Schema.Struct({
      chassisSerial: optionalString,
      slotNumber: optionalString,
      trayIndex: optionalString,
      hostId: optionalString,
      peerType: optionalString,
      fabricGuid: optionalString,
    }),
  ),
})
