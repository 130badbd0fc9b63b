/** The help of `gpu-serials where`. */
export const whereUsage = `Usage: gpu-serials where SERIAL|UUID [--cluster NAME,...] [--format table|json] [NATS FLAGS]

Prints where a GPU is now, from the NATS KV bucket of current locations the service keeps: the GPU
with that uuid, or every GPU with that serial (a GB200 module's two GPUs share one), in every cluster
that writes to the bucket, one row per GPU and cluster, with the GPU's last health (the state, its
reasons when not ok, (RMA) for a board to return; - when no reading told it). Exits 1 when the bucket
knows no such GPU or NATS cannot be reached. Against a hub's NATS (--nats-url of the hub) the bucket
sources every cluster's, so where answers for the whole fleet.

  --cluster NAME        only the locations of these clusters (their CLUSTER_NAME): repeat the flag or
                        give a comma list; without it every cluster of the bucket
  --format table|json   an aligned table (default) or one JSON location per line

NATS connection: the NATS_* environment variables of the nats exporter, or its flags
(--nats-url, --nats-kv-bucket, --nats-creds, --nats-user, --nats-tls-ca, --nats-tls-cert, --nats-tls-key).
`
