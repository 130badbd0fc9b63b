import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import { MINUTE, positive, SECOND } from "../../config/SettingRules.ts"
import { durationType, intType, listType, stringType } from "../../config/SettingType.ts"
import { type NatsConnectionConfig, natsConnectionSettings } from "../../natsclient/NatsConnectionSettings.ts"

/**
 * The `nats` receiver's settings (section `receivers.nats`): a hub's NATS, the clusters it sources (their
 * names are the JetStream domains of their leaf nodes), the names of the clusters' stream and bucket, and
 * the hub's own stream, bucket, store and consumer.
 */

/** A JetStream stream name: no spaces, `.`, `*`, `>`, `/` or `\`. */
const STREAM_NAME = /^[^\s.*>/\\]+$/
/** A KV bucket name. */
const BUCKET_NAME = /^[A-Za-z0-9_-]+$/
/** A subject token of a prefix: no spaces, `*` or `>`. */
const SUBJECT_TOKEN = /^[^\s.*>]+$/
/** A JetStream domain: one subject token. */
const DOMAIN = /^[A-Za-z0-9_-]+$/

export const hubConnection = natsConnectionSettings({
  prefix: "HUB_NATS",
  label: "hub NATS",
  defaultUrl: "nats://127.0.0.1:4222",
  urlDescription:
    "The hub's NATS servers (comma list of nats://, tls://, ws:// or wss:// URLs, or host:port), whose leaf nodes are the clusters' NATS.",
})

export const hubClustersSetting: Setting<ReadonlyArray<string>> = {
  key: "clusters",
  env: "HUB_CLUSTERS",
  flag: "--hub-clusters",
  type: listType,
  secret: "none",
  label: "hub clusters",
  description:
    "The clusters the hub sources, each the JetStream domain of its leaf node (comma list); a cluster added here is sourced at the next start or reload.",
  check: (clusters) => {
    const bad = clusters.find((cluster) => !DOMAIN.test(cluster))
    if (bad !== undefined)
      return `hub cluster ${JSON.stringify(bad)} is not a JetStream domain (letters, digits, '_', '-')`
    const twice = clusters.find((cluster, index) => clusters.indexOf(cluster) !== index)
    return twice === undefined ? undefined : `hub cluster ${JSON.stringify(twice)} is listed twice`
  },
}

const streamSetting = (
  key: string,
  env: string,
  fallback: string,
  label: string,
  description: string,
): Setting<string> => ({
  key,
  env,
  type: stringType,
  default: fallback,
  secret: "none",
  label,
  description,
  check: (value) =>
    STREAM_NAME.test(value) ? undefined : `${label} name must not contain spaces, '.', '*', '>', '/' or '\\'`,
})

const bucketSetting = (
  key: string,
  env: string,
  fallback: string,
  label: string,
  description: string,
): Setting<string> => ({
  key,
  env,
  type: stringType,
  default: fallback,
  secret: "none",
  label,
  description,
  check: (value) => (BUCKET_NAME.test(value) ? undefined : `${label} name must be letters, digits, '_' or '-'`),
})

export const clusterStreamSetting = streamSetting(
  "clusterStream",
  "HUB_CLUSTER_STREAM",
  "GPU_SERIALS",
  "hub cluster stream",
  "The JetStream stream each cluster's nats exporter publishes to (its NATS_STREAM), in the cluster's domain.",
)

export const clusterSubjectPrefixSetting: Setting<string> = {
  key: "clusterSubjectPrefix",
  env: "HUB_CLUSTER_SUBJECT_PREFIX",
  type: stringType,
  default: "gpu.serials",
  secret: "none",
  label: "hub cluster subject prefix",
  description:
    "The subject prefix each cluster's nats exporter publishes under (its NATS_SUBJECT_PREFIX): the hub stream takes from each cluster's stream only <prefix>.<cluster>.>, since leaf nodes of one account also store the other clusters' records.",
  check: (value) =>
    value.split(".").every((token) => SUBJECT_TOKEN.test(token))
      ? undefined
      : "hub cluster subject prefix must be dot-separated tokens without spaces, '*' or '>'",
}

export const clusterKvBucketSetting = bucketSetting(
  "clusterKvBucket",
  "HUB_CLUSTER_KV_BUCKET",
  "gpu_serials",
  "hub cluster KV bucket",
  "The KV bucket each cluster's nats exporter keeps (its NATS_KV_BUCKET), in the cluster's domain.",
)

export const hubStreamSetting = streamSetting(
  "stream",
  "HUB_STREAM",
  "GPU_SERIALS_HUB",
  "hub stream",
  "The hub's stream, created or updated to source every cluster's stream by domain; the receiver consumes it.",
)

export const hubKvBucketSetting = bucketSetting(
  "kvBucket",
  "HUB_KV_BUCKET",
  "gpu_serials",
  "hub KV bucket",
  "The hub's KV bucket, created or updated to source every cluster's bucket, so that where answers for the whole fleet; with NATS before 2.10 it must have the clusters' bucket name.",
)

export const hubStateBucketSetting = bucketSetting(
  "stateBucket",
  "HUB_STATE_BUCKET",
  "gpu_serials_hub",
  "hub state bucket",
  "The hub's own KV bucket: where each GPU is, the removals held for a move across clusters, and how far the hub stream was applied, so a restarted hub loses and repeats nothing.",
)

export const hubConsumerSetting: Setting<string> = {
  key: "consumer",
  env: "HUB_CONSUMER",
  type: stringType,
  default: "gpu-serials-hub",
  secret: "none",
  label: "hub consumer",
  description: "The durable consumer of the hub stream.",
  check: (value) => (BUCKET_NAME.test(value) ? undefined : "hub consumer name must be letters, digits, '_' or '-'"),
}

export const hubBatchSizeSetting: Setting<number> = {
  key: "batchSize",
  env: "HUB_BATCH_SIZE",
  type: intType,
  default: 500,
  secret: "none",
  label: "hub batch size",
  bounds: { min: 1, max: 10_000 },
  description: "Most messages of the hub stream taken at once; the processor acknowledges each batch.",
  check: positive("hub batch size must be > 0"),
}

export const hubSourceInactiveAfterSetting: Setting<number> = {
  key: "sourceInactiveAfter",
  env: "HUB_SOURCE_INACTIVE_AFTER",
  type: durationType,
  default: 2 * MINUTE,
  secret: "none",
  label: "hub source inactive after",
  bounds: { min: 5 * SECOND, max: 24 * 60 * MINUTE },
  description:
    "How long the hub stream may go without contact with a cluster's stream before readiness check sources names that cluster.",
  check: positive("hub source inactive after must be > 0"),
}

/** The `nats` receiver's section. */
export interface HubNatsConfig extends NatsConnectionConfig {
  readonly clusters: ReadonlyArray<string>
  readonly clusterStream: string
  readonly clusterSubjectPrefix: string
  readonly clusterKvBucket: string
  readonly stream: string
  readonly kvBucket: string
  readonly stateBucket: string
  readonly consumer: string
  readonly batchSize: number
  readonly sourceInactiveAfterMs: number
}

export const hubNatsSettings: ComponentSettings<HubNatsConfig> = {
  settings: [
    hubConnection.url,
    hubClustersSetting,
    clusterStreamSetting,
    clusterSubjectPrefixSetting,
    clusterKvBucketSetting,
    hubStreamSetting,
    hubKvBucketSetting,
    hubStateBucketSetting,
    hubConsumerSetting,
    hubBatchSizeSetting,
    hubSourceInactiveAfterSetting,
    ...hubConnection.list.filter((setting) => setting !== hubConnection.url),
    ...hubConnection.tls.list,
  ],
  rules: [
    ...hubConnection.rules,
    // A rule, not the setting's own check: the default (none) is the starting point a hub's config fills in.
    (values) =>
      values.get(hubClustersSetting)?.length === 0 ||
      (values.get(hubClustersSetting) === undefined && values.origin(hubClustersSetting).source === "default")
        ? [{ setting: hubClustersSetting, message: "hub clusters must name at least one cluster" }]
        : [],
    (values) => {
      const stream = values.get(hubStreamSetting)
      return stream !== undefined && stream === values.get(clusterStreamSetting)
        ? [{ setting: hubStreamSetting, message: "hub stream must differ from the clusters' stream" }]
        : []
    },
    (values) => {
      const state = values.get(hubStateBucketSetting)
      return state !== undefined &&
        (state === values.get(hubKvBucketSetting) || state === values.get(clusterKvBucketSetting))
        ? [
            {
              setting: hubStateBucketSetting,
              message: "hub state bucket must differ from the hub's and the clusters' KV buckets",
            },
          ]
        : []
    },
  ],
  build: (values) => ({
    ...hubConnection.connectionOf(values),
    clusters: values.get(hubClustersSetting) ?? [],
    clusterStream: values.require(clusterStreamSetting),
    clusterSubjectPrefix: values.require(clusterSubjectPrefixSetting),
    clusterKvBucket: values.require(clusterKvBucketSetting),
    stream: values.require(hubStreamSetting),
    kvBucket: values.require(hubKvBucketSetting),
    stateBucket: values.require(hubStateBucketSetting),
    consumer: values.require(hubConsumerSetting),
    batchSize: values.require(hubBatchSizeSetting),
    sourceInactiveAfterMs: values.require(hubSourceInactiveAfterSetting),
  }),
}
