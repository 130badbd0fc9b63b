import { settingFlagsHelp } from "../run/RunUsage.ts"

/** The help of `gpu-serials demo`. */
export const demoUsage = `Usage: gpu-serials demo [--nodes N] [--duration D] [--fault-rate P] [--fault-health R]
                        [--churn R] [--seed S] [--exec-latency D] [--postgres-url URL] [--dra]
                        [--clusters N [--cross-cluster-swaps R]] [SETTING FLAGS]

Starts the built-in simulated Kubernetes cluster (a Kubernetes API server on 127.0.0.1 with GPU
nodes whose device-plugin pods answer nvidia-smi) and runs the real service against it: records on
stdout as they arrive, logs and a progress line every 5 seconds on stderr, then a summary. The
default fleet of 8 nodes has GB200 NVL72 trays (serials shared per module, one chassis), H100 HGX,
a MIG A100, a T4 VM, a bare-metal RTX 4090 workstation without providerID or serial, and a node
whose driver is broken. The kubeconfig path is printed, so kubectl can look at the cluster while
the demo runs, and the kubectl command that shows the node labels with GPU serials. The health
server listens on 127.0.0.1 and a free port unless --server-address/SERVER_ADDRESS or
--server-port/SERVER_PORT say otherwise. The removal grace is 10s, so GPUs of nodes that leave are
removed while the demo runs, unless --removal-grace or REMOVAL_GRACE says otherwise. With the
http exporter in the pipeline (--exporter stdout,http), records go to an HTTP receiver the demo
runs on 127.0.0.1, counted in the summary, unless --http-endpoint or HTTP_ENDPOINT names another.

  --nodes N          GPU nodes (default 8)
  --duration D       how long to run, Go syntax (default 20s; 0 runs until Ctrl-C)
  --fault-rate P     probability of each injected fault per request or exec: 5xx, 429, exec hang,
                     non-zero exit, truncated and garbage output (default 0)
  --fault-health R   share of healthy GPUs per minute that turn degraded or failed (a row remap
                     pending then failed, ECC errors, a PCIe link at x8, the NVLink fabric down, a
                     recovery action) and read healthy again after a reset, each step lasting 8 to
                     12 s; nodes are then read every 5s unless --resync or RESYNC says otherwise
                     (default 0)
  --churn R          pod restarts and GPU swaps per minute, node joins and leaves at half that
                     (default 0)
  --seed S           same seed, same cluster (default gpu-serials)
  --exec-latency D   nvidia-smi run time in the simulated pods (default: median 150ms, p99 600ms)
  --postgres-url URL database of the postgres exporter (--exporter stdout,postgres), its tables
                     created when missing; e.g. postgres://127.0.0.1:5432/test?sslmode=disable
  --clusters N       a fleet of N simulated clusters (2 to 16, named demo-1, demo-2, …) under one
                     hub: a leaf nats-server per cluster (JetStream domain = its name) and a hub
                     nats-server on 127.0.0.1 (nats-server from the PATH or /usr/sbin), one
                     service per cluster publishing to its leaf (NATS_STREAM=GPU_SERIALS, its
                     inventory in the leaf's KV bucket, NATS_STREAM_EXPECT=false for nats-server
                     before 2.10.14), and the hub's service (receiver nats, processor fleet) whose
                     records are stdout; the setting flags are the hub's. The hub's NATS URL is
                     printed for 'gpu-serials where <serial> --nats-url URL', and the summary lists
                     the GPUs the hub saw move between clusters
  --cross-cluster-swaps R
                     with --clusters, swaps each cluster starts per minute with another cluster
                     of the fleet, a board of each trading places (default 3)
  --dra              GPUs allocated through NVIDIA's DRA driver: the cluster serves ResourceSlices
                     of gpu.nvidia.com and runs the driver's kubelet-plugin pods instead of
                     device-plugin pods, and the service runs with DISCOVERY=dra unless
                     --discovery says otherwise

Setting flags are those of 'gpu-serials run' (the demo sets --cluster-name demo and --kubeconfig):
${settingFlagsHelp}
`
