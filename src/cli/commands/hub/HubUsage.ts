/** The help of `gpu-serials hub`. */
export const hubUsage = `Usage: gpu-serials hub status [--hub-stream NAME] [--format table|json] [NATS FLAGS]

Lists the clusters a hub follows, one row each: when the hub last heard of the cluster (the newest
record or heartbeat of it in the hub stream), how many messages of the cluster's stream the hub stream
has yet to copy (LAG) and how long ago its source last reached the cluster (SOURCE SEEN), and the
cluster's GPUs in the hub's KV bucket. Exits 1 when the hub's NATS cannot be reached or has no hub stream.

  --hub-stream NAME     the hub stream (HUB_STREAM; default GPU_SERIALS_HUB)
  --format table|json   an aligned table (default) or one JSON object per cluster and line

NATS connection: the hub's NATS, from the NATS_* environment variables of the nats exporter or its flags
(--nats-url, --nats-kv-bucket: the hub's bucket, --nats-subject-prefix: the clusters' prefix,
--nats-creds, --nats-user, --nats-tls-ca, --nats-tls-cert, --nats-tls-key).
`
