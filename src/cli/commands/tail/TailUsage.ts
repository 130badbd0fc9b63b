import { inventoryEventKinds } from "../../../domain/InventoryEventKind.ts"

/** The help of `gpu-serials tail`. */
export const tailUsage = `Usage: gpu-serials tail [--cluster C,...] [--node N] [--event E] [--count N] [NATS FLAGS]

Subscribes to the events the nats exporter publishes and prints each gpu-serials/v1 record as it
arrives, one JSON record per line, until interrupted (Ctrl-C) or --count records were printed.

  --cluster C    only events of cluster C: repeat the flag or give a comma list; without it every cluster
  --node N       only events of node N (a name with dots is fine)
  --event E      only events of kind E: ${inventoryEventKinds.join(", ")}
  --count N      stop after N records

A hub: follow the records of the hub's own nats exporter, the fleet with its moves between clusters,
by giving the hub's NATS and that exporter's prefix (--nats-url nats://hub:4222 --nats-subject-prefix
gpu.fleet); --cluster then keeps the records of those clusters.

NATS connection: the NATS_* environment variables of the nats exporter, or its flags
(--nats-url, --nats-subject-prefix, --nats-creds, --nats-user, --nats-tls-ca, --nats-tls-cert, --nats-tls-key).
`
