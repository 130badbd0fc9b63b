import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { SettingRule } from "../../config/ResolveSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { DAY, HOUR, notNegative, positive, SECOND, YEAR } from "../../config/SettingRules.ts"
import { boolType, byteSizeType, durationType, enumType, stringType } from "../../config/SettingType.ts"
import { type NatsConnectionConfig, natsConnectionSettings } from "../../natsclient/NatsConnectionSettings.ts"
import {
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "../exporterhelper/QueueSettings.ts"

/**
 * The `nats` exporter's settings (section `exporters.nats`, or `exporters.nats/<name>`): servers,
 * subjects, stream, KV bucket, authentication and TLS, and the queue every exporter has. The
 * environment variables and flags apply to every `nats` exporter of the pipeline.
 */

const SUBJECT_TOKEN = /^[^\s.*>]+$/
const STREAM_NAME = /^[^\s.*>/\\]+$/

/** The exporter's connection: `NATS_URL`, `NATS_CREDS`, …, `NATS_TLS_CA`, and their flags. */
export const natsConnection = natsConnectionSettings({
  prefix: "NATS",
  label: "NATS",
  defaultUrl: "nats://127.0.0.1:4222",
  urlDescription: "NATS servers (comma list of nats://, tls://, ws:// or wss:// URLs, or host:port).",
})

export const natsUrlSetting: Setting<string> = natsConnection.url

export const natsSubjectPrefixSetting: Setting<string> = {
  key: "subjectPrefix",
  env: "NATS_SUBJECT_PREFIX",
  flag: "--nats-subject-prefix",
  type: stringType,
  default: "gpu.serials",
  secret: "none",
  label: "NATS subject prefix",
  description: "Subjects are <prefix>.<cluster>.<node>.<event>.",
  check: (value) =>
    value.split(".").every((token) => SUBJECT_TOKEN.test(token))
      ? undefined
      : "NATS subject prefix must be dot-separated tokens without spaces, '*' or '>'",
}

export const natsStreamSetting: Setting<string> = {
  key: "stream",
  env: "NATS_STREAM",
  flag: "--nats-stream",
  type: stringType,
  secret: "none",
  label: "NATS stream",
  description: "JetStream stream to publish to with acks and de-duplication; unset publishes on core NATS.",
  check: (value) =>
    STREAM_NAME.test(value) ? undefined : "NATS stream name must not contain spaces, '.', '*', '>', '/' or '\\'",
}

export const natsStreamCreateSetting: Setting<boolean> = {
  key: "streamCreate",
  env: "NATS_STREAM_CREATE",
  flag: "--nats-stream-create",
  type: boolType,
  default: true,
  secret: "none",
  label: "NATS stream create",
  description:
    "Whether the exporter creates the stream when missing and updates its subjects, duplicate window, max age and max bytes; false: the stream must exist.",
}

export const natsStreamExpectSetting: Setting<boolean> = {
  key: "streamExpect",
  env: "NATS_STREAM_EXPECT",
  type: boolType,
  default: true,
  secret: "none",
  label: "NATS stream expect",
  description:
    "Whether each publish carries Nats-Expected-Stream, so that a publish another stream captures is refused; nats-server before 2.10.14 cannot source such messages into a hub, so a cluster whose stream a hub on those versions sources sets false.",
}

export const natsStreamDuplicateWindowSetting: Setting<number> = {
  key: "duplicateWindow",
  env: "NATS_STREAM_DUPLICATE_WINDOW",
  type: durationType,
  default: 120_000,
  secret: "none",
  label: "NATS stream duplicate window",
  bounds: { min: 1, max: DAY },
  description: "Window in which the stream drops a second message with the same record id.",
  check: positive("NATS stream duplicate window must be > 0"),
}

export const natsStreamRetentionSetting: Setting<"limits" | "interest" | "workqueue"> = {
  key: "retention",
  env: "NATS_STREAM_RETENTION",
  type: enumType(["limits", "interest", "workqueue"]),
  default: "limits",
  secret: "none",
  label: "NATS stream retention",
  description: "Retention policy of a stream the exporter creates; an existing stream keeps its own.",
}

export const natsStreamMaxAgeSetting: Setting<number> = {
  key: "maxAge",
  env: "NATS_STREAM_MAX_AGE",
  type: durationType,
  default: 7 * 24 * 3_600_000,
  secret: "none",
  label: "NATS stream max age",
  bounds: { min: SECOND, max: YEAR, zeroDisables: true },
  description: "How long the stream keeps a message (default 7 days); 0 keeps it forever.",
  check: notNegative("NATS stream max age must be >= 0 (0 keeps messages forever)"),
}

export const natsStreamMaxBytesSetting: Setting<number> = {
  key: "maxBytes",
  env: "NATS_STREAM_MAX_BYTES",
  type: byteSizeType,
  default: 1024 * 1024 * 1024,
  secret: "none",
  label: "NATS stream max bytes",
  bounds: { min: 1024 * 1024, max: 1024 ** 5, zeroDisables: true },
  description:
    "Most bytes the stream keeps (bytes, or 512Mi, 1Gi), the oldest messages discarded beyond; 0: no size limit.",
  check: notNegative("NATS stream max bytes must be >= 0 (0: no size limit)"),
}

export const natsKvBucketSetting: Setting<string> = {
  key: "kvBucket",
  env: "NATS_KV_BUCKET",
  flag: "--nats-kv-bucket",
  type: stringType,
  default: "gpu_serials",
  secret: "none",
  label: "NATS KV bucket",
  description: "Key-value bucket of the current location of every GPU, by uuid and by serial.",
  check: (value) =>
    /^[A-Za-z0-9_-]+$/.test(value) ? undefined : "NATS KV bucket name must be letters, digits, '_' or '-'",
}

export const natsHeartbeatIntervalSetting: Setting<number> = {
  key: "heartbeatInterval",
  env: "HEARTBEAT_INTERVAL",
  flag: "--heartbeat-interval",
  type: durationType,
  default: 30_000,
  secret: "none",
  label: "heartbeat interval",
  bounds: { min: SECOND, max: HOUR, zeroDisables: true },
  description:
    "How often the exporter publishes the cluster's heartbeat on <prefix>.<cluster>.heartbeat, so that a hub knows the cluster is alive while nothing changes; 0 disables it.",
  check: notNegative("heartbeat interval must be >= 0 (0 disables heartbeats)"),
}

export const natsCredsSetting: Setting<string> = natsConnection.creds
export const natsTokenSetting: Setting<string> = natsConnection.token
export const natsUserSetting: Setting<string> = natsConnection.user
export const natsPasswordSetting: Setting<string> = natsConnection.password
export const natsNkeySeedSetting: Setting<string> = natsConnection.nkeySeed

/** The TLS client files: `NATS_TLS_CA`, `NATS_TLS_CERT`, `NATS_TLS_KEY`. */
export const natsTls = natsConnection.tls

const natsStreamRule: SettingRule = (values) => {
  const window = values.get(natsStreamDuplicateWindowSetting)
  const maxAge = values.get(natsStreamMaxAgeSetting)
  return window !== undefined && maxAge !== undefined && maxAge > 0 && window > maxAge
    ? [
        {
          setting: natsStreamDuplicateWindowSetting,
          message: "NATS stream duplicate window must not be longer than the stream's max age",
        },
      ]
    : []
}

export type { NatsAuth } from "../../natsclient/NatsConnectionSettings.ts"

/** How the exporter treats its JetStream stream. */
export interface NatsStreamSettings {
  /** Whether the exporter creates a missing stream and updates an existing one; false: it must exist. */
  readonly create: boolean
  readonly duplicateWindowMs: number
  /** Applies to a stream the exporter creates; an existing stream's retention cannot change. */
  readonly retention: "limits" | "interest" | "workqueue"
  /** 0: messages are kept forever. */
  readonly maxAgeMs: number
  /** Beyond it the oldest messages are discarded; 0: no size limit. */
  readonly maxBytes: number
}

/** The `nats` exporter's section. */
export interface NatsExporterConfig extends NatsConnectionConfig {
  /** Subjects are `<subjectPrefix>.<cluster>.<node>.<event>`. */
  readonly subjectPrefix: string
  /** JetStream stream; absent: core NATS publish. */
  readonly stream?: string
  readonly streamSettings: NatsStreamSettings
  /** Whether each publish names the stream it expects (`Nats-Expected-Stream`). */
  readonly streamExpect: boolean
  readonly kvBucket: string
  /** How often the cluster's heartbeat is published; 0: never. */
  readonly heartbeatIntervalMs: number
  readonly queue: QueueSettings
}

/** The exporter's settings, in the order of the configuration reference. */
export const natsSettings: ComponentSettings<NatsExporterConfig> = {
  settings: [
    natsUrlSetting,
    natsSubjectPrefixSetting,
    natsStreamSetting,
    natsStreamCreateSetting,
    natsStreamExpectSetting,
    natsStreamDuplicateWindowSetting,
    natsStreamRetentionSetting,
    natsStreamMaxAgeSetting,
    natsStreamMaxBytesSetting,
    natsKvBucketSetting,
    natsHeartbeatIntervalSetting,
    natsCredsSetting,
    natsTokenSetting,
    natsUserSetting,
    natsPasswordSetting,
    natsNkeySeedSetting,
    ...natsTls.list,
    ...queueSettingList,
  ],
  rules: [...natsConnection.rules, natsStreamRule, queueSettingsRule],
  build: (values) => {
    const stream = values.get(natsStreamSetting)
    return {
      ...natsConnection.connectionOf(values),
      subjectPrefix: values.require(natsSubjectPrefixSetting),
      ...(stream === undefined ? {} : { stream }),
      streamSettings: {
        create: values.require(natsStreamCreateSetting),
        duplicateWindowMs: values.require(natsStreamDuplicateWindowSetting),
        retention: values.require(natsStreamRetentionSetting),
        maxAgeMs: values.require(natsStreamMaxAgeSetting),
        maxBytes: values.require(natsStreamMaxBytesSetting),
      },
      streamExpect: values.require(natsStreamExpectSetting),
      kvBucket: values.require(natsKvBucketSetting),
      heartbeatIntervalMs: values.require(natsHeartbeatIntervalSetting),
      queue: queueSettingsOf(values),
    }
  },
}
