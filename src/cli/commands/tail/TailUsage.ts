import { inventoryEventKinds } from "../../../domain/InventoryEventKind.ts"

/** The help of `gpu-serials tail`. */
export const tailUsage = `Usage: gpu-serials tail [--cluster C] [--node N] [--event E] [--count N] [NATS FLAGS]

Subscribes to the events the nats exporter publishes and prints each gpu-serials/v1 record as it
arrives, one JSON record per line, until interrupted (Ctrl-C) or --count records were printed.

  --cluster C    only events of cluster C
  --node N       only events of node N (a name with dots is fine)
  --event E      only events of kind E: ${inventoryEventKinds.join(", ")}
  --count N      stop after N records

NATS connection: the NATS_* environment variables of the nats exporter, or its flags
(--nats-url, --nats-subject-prefix, --nats-creds, --nats-user, --nats-tls-ca, --nats-tls-cert, --nats-tls-key).
`
