import * as Schema from "effect/Schema"
import { clockEvents, healthStates } from "./GpuHealth.ts"

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
  migDevices: Schema.optionalKey(Schema.Array(Schema.Struct({ uuid: Schema.String, profile: optionalString }))),
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

const optionalNumber = Schema.optionalKey(Schema.Number)
const optionalBoolean = Schema.optionalKey(Schema.Boolean)
const CurrentAndMax = Schema.Struct({ current: optionalNumber, max: optionalNumber })

/**
 * A GPU's last health verdict as a durable store keeps it, so a restarted inventory compares the next
 * reading with it and re-announces nothing that did not change.
 */
export const StoredHealth = Schema.Struct({
  state: Schema.Literals(healthStates),
  reasons: Schema.Array(Schema.String),
  rmaEligible: Schema.Boolean,
  retiredPages: Schema.optionalKey(
    Schema.Struct({ singleBit: optionalNumber, doubleBit: optionalNumber, pending: optionalBoolean }),
  ),
  remappedRows: Schema.optionalKey(
    Schema.Struct({
      correctable: optionalNumber,
      uncorrectable: optionalNumber,
      pending: optionalBoolean,
      failure: optionalBoolean,
    }),
  ),
  ecc: Schema.optionalKey(
    Schema.Struct({
      enabled: optionalBoolean,
      volatileUncorrectable: optionalNumber,
      aggregateUncorrectable: optionalNumber,
      volatileCorrectable: optionalNumber,
      aggregateCorrectable: optionalNumber,
    }),
  ),
  recoveryAction: optionalString,
  pcie: Schema.optionalKey(
    Schema.Struct({
      linkGen: Schema.optionalKey(CurrentAndMax),
      linkWidth: Schema.optionalKey(CurrentAndMax),
      replays: optionalNumber,
    }),
  ),
  clockEvents: Schema.optionalKey(Schema.Array(Schema.Literals(clockEvents))),
  fabric: Schema.optionalKey(
    Schema.Struct({
      state: optionalString,
      status: optionalString,
      cliqueId: optionalString,
      clusterUuid: optionalString,
      summary: optionalString,
    }),
  ),
  vbios: optionalString,
})
