import { describe, expect, it } from "vitest"
import { CONFIG_INVALID_EXIT_CODE } from "../../src/config/ConfigInvalid.ts"
import { defaultNatsStreamSection, defaultQueueSection } from "./QueueSectionFixture.ts"
import { configOf, invalidOf, problemsOf, resolve } from "./ResolveFixture.ts"

const cluster = { CLUSTER_NAME: "prod" }
const knownTypes = "stdout, otlp, nats, http, postgres"

describe("defaults", () => {
  it("are the Go original's", () => {
    const kubeExec = {
      discovery: "device-plugin",
      namespace: "gpu-operator",
      labelSelector: "app=nvidia-device-plugin-daemonset",
      container: "nvidia-device-plugin",
      workers: 16,
      timeoutMs: 30_000,
      resyncMs: 0,
      qps: 50,
      burst: 100,
      kubeconfig: "",
      nvidiaSmi: { mode: "auto", maxOutputBytes: 8 * 1024 * 1024, path: "nvidia-smi", mlLibrary: "" },
      nodeLabels: { enabled: true, prefix: "gpu-serials.dev" },
      targets: {
        "device-plugin": {
          namespace: "gpu-operator",
          labelSelector: "app=nvidia-device-plugin-daemonset",
          container: "nvidia-device-plugin",
          nvidiaSmiPath: "nvidia-smi",
          nvidiaMlLibrary: "",
        },
        dra: {
          namespace: "nvidia-dra-driver-gpu",
          labelSelector: "nvidia-dra-driver-gpu-component=kubelet-plugin",
          container: "gpus",
          nvidiaSmiPath: "/driver-root/usr/bin/nvidia-smi",
          nvidiaMlLibrary: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        },
      },
    }
    const inventory = {
      reportIntervalMs: 3_600_000,
      removalGraceMs: 300_000,
      store: "memory",
      health: { retiredPagesLimit: 63, remappedRowsLimit: 512, volatileUncorrectableLimit: 0 },
    }
    const expected = {
      clusterName: "prod",
      kubeExec,
      inventory,
      receivers: [{ id: "kube_exec", type: "kube_exec", config: kubeExec }],
      processors: [{ id: "inventory", type: "inventory", config: inventory }],
      exporters: [{ id: "stdout", type: "stdout", section: defaultQueueSection }],
      leaderElection: {
        enabled: false,
        leaseName: "gpuid-leader",
        leaseNamespace: "gpuid",
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        identity: "",
      },
      telemetry: { logLevel: "info", serverPort: 8080, serverAddress: "", gpuInfoMetric: true },
      fleet: { page: true, token: "", events: 1000 },
      shutdownTimeoutMs: 20_000,
    }
    expect(configOf({ env: cluster })).toEqual(expected)
  })

  it("apply when a typed variable is empty, as in the Go original", () => {
    const config = configOf({ env: { ...cluster, WORKERS: "", TIMEOUT: "", QPS: "", SERVER_PORT: "" } })
    expect(config.kubeExec.workers).toBe(16)
    expect(config.kubeExec.timeoutMs).toBe(30_000)
    expect(config.kubeExec.qps).toBe(50)
    expect(config.telemetry.serverPort).toBe(8080)
  })
})

describe("Kubernetes names", () => {
  it.each(["GPU-Operator", "gpu_operator", "-gpu", "gpu.operator", "a".repeat(64)])(
    "refuses NAMESPACE=%s, which no namespace can be called",
    (namespace) => {
      expect(problemsOf({ env: { ...cluster, NAMESPACE: namespace } })).toEqual([
        {
          key: "NAMESPACE",
          message:
            "namespace must be a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
        },
      ])
    },
  )

  it("takes a namespace name of 63 characters", () => {
    const namespace = `gpu-${"a".repeat(59)}`
    expect(configOf({ env: { ...cluster, NAMESPACE: namespace } }).kubeExec.namespace).toBe(namespace)
  })
})

describe("the Go original's messages", () => {
  it.each([
    [{ EXPORTER_TYPE: "" }, "EXPORTER_TYPE", `invalid exporter type "" (known types: ${knownTypes})`],
    [{ EXPORTER_TYPE: "s3" }, "EXPORTER_TYPE", `invalid exporter type "s3" (known types: ${knownTypes})`],
    [{ CLUSTER_NAME: "" }, "CLUSTER_NAME", "cluster name must be specified"],
    [{ CLUSTER_NAME: "  " }, "CLUSTER_NAME", "cluster name must be specified"],
    [{ NAMESPACE: "" }, "NAMESPACE", "namespace must be specified"],
    [{ LABEL_SELECTOR: "" }, "LABEL_SELECTOR", "label selector must be specified"],
    [{ CONTAINER: "" }, "CONTAINER", "container must be specified"],
    [{ WORKERS: "0" }, "WORKERS", "workers must be > 0"],
    [{ WORKERS: "-3" }, "WORKERS", "workers must be > 0"],
    [{ TIMEOUT: "0" }, "TIMEOUT", "timeout must be > 0"],
    [{ TIMEOUT: "-1s" }, "TIMEOUT", "timeout must be > 0"],
    [{ RESYNC: "-1m" }, "RESYNC", "resync period must be >= 0 (0 disables periodic resync)"],
    [{ QPS: "0" }, "QPS", "qps must be > 0"],
    [{ QPS: "-0.5" }, "QPS", "qps must be > 0"],
    [{ BURST: "0" }, "BURST", "burst must be > 0"],
    [{ SERVER_PORT: "80" }, "SERVER_PORT", "server port must be a valid integer between 1000 and 65535"],
    [{ SERVER_PORT: "65536" }, "SERVER_PORT", "server port must be a valid integer between 1000 and 65535"],
    [{ SERVER_PORT: "http" }, "SERVER_PORT", "server port must be a valid integer between 1000 and 65535"],
  ])("%j → %s: %s", (env, key, message) => {
    expect(problemsOf({ env: { ...cluster, ...env } })).toEqual([{ key, message }])
  })

  it("reports WORKERS=0 SERVER_PORT=80 CLUSTER_NAME= all at once, one per line, for exit code 2", () => {
    const invalid = invalidOf({ env: { WORKERS: "0", SERVER_PORT: "80", CLUSTER_NAME: "" } })
    expect(invalid.problems).toEqual([
      { key: "CLUSTER_NAME", message: "cluster name must be specified" },
      { key: "SERVER_PORT", message: "server port must be a valid integer between 1000 and 65535" },
      { key: "WORKERS", message: "workers must be > 0" },
    ])
    expect(invalid.format()).toBe(
      [
        "CLUSTER_NAME: cluster name must be specified",
        "SERVER_PORT: server port must be a valid integer between 1000 and 65535",
        "WORKERS: workers must be > 0",
      ].join("\n"),
    )
    expect(invalid.message).toBe(invalid.format())
    expect(invalid._tag).toBe("ConfigInvalid")
    expect(CONFIG_INVALID_EXIT_CODE).toBe(2)
  })

  it("names a missing cluster by its variable when there is no config file", () => {
    expect(problemsOf({})).toEqual([{ key: "CLUSTER_NAME", message: "cluster name must be specified" }])
  })
})

describe("the shutdown deadline and the health server's address", () => {
  it("default to 20s, under Kubernetes' default grace period of 30s, and every interface", () => {
    const config = configOf({ env: cluster })
    expect(config.shutdownTimeoutMs).toBe(20_000)
    expect(config.telemetry.serverAddress).toBe("")
  })

  it("take a duration and an IP address", () => {
    const config = configOf({ env: { ...cluster, SHUTDOWN_TIMEOUT: "45s", SERVER_ADDRESS: "::1" } })
    expect(config.shutdownTimeoutMs).toBe(45_000)
    expect(config.telemetry.serverAddress).toBe("::1")
  })

  it.each([
    [{ SHUTDOWN_TIMEOUT: "0s" }, "SHUTDOWN_TIMEOUT", "shutdown timeout must be between 1s and 10m, got 0s"],
    [{ SHUTDOWN_TIMEOUT: "1h" }, "SHUTDOWN_TIMEOUT", "shutdown timeout must be between 1s and 10m, got 1h"],
    [
      { SERVER_ADDRESS: "localhost" },
      "SERVER_ADDRESS",
      "server address must be an IP address such as 127.0.0.1 or ::1, or empty for every interface",
    ],
  ])("%j → %s: %s", (env, key, message) => {
    expect(problemsOf({ env: { ...cluster, ...env } })).toEqual([{ key, message }])
  })
})

describe("values that cannot be read are errors naming their key", () => {
  it.each([
    [{ WORKERS: "abc" }, "WORKERS", 'workers must be an integer, got "abc"'],
    [{ WORKERS: "4x" }, "WORKERS", 'workers must be an integer, got "4x"'],
    [{ BURST: "1.5" }, "BURST", 'burst must be an integer, got "1.5"'],
    [{ QPS: "fast" }, "QPS", 'qps must be a number, got "fast"'],
    [{ TIMEOUT: "30" }, "TIMEOUT", 'timeout must be a duration such as 30s or 1m30s: missing unit in duration "30"'],
    [
      { RESYNC: "5x" },
      "RESYNC",
      'resync period must be a duration such as 30s or 1m30s: unknown unit "x" in duration "5x"',
    ],
    [{ LEADER_ELECTION: "yes" }, "LEADER_ELECTION", 'leader election must be true or false, got "yes"'],
    [{ LOG_LEVEL: "verbose" }, "LOG_LEVEL", 'log level must be one of debug, info, warn, error, got "verbose"'],
    [{ NVIDIA_SMI_MODE: "json" }, "NVIDIA_SMI_MODE", 'nvidia-smi mode must be one of auto, xml, csv, got "json"'],
    [
      { NVIDIA_SMI_MAX_OUTPUT: "8MB" },
      "NVIDIA_SMI_MAX_OUTPUT",
      'nvidia-smi output cap must be a byte size: invalid byte size "8MB" (use bytes or a suffix: 512Ki, 8Mi, 1Gi)',
    ],
    [{ REPORT_INTERVAL: "-1h" }, "REPORT_INTERVAL", "report interval must be >= 0 (0 disables periodic reports)"],
    [
      { LABEL_SELECTOR: "app in prod" },
      "LABEL_SELECTOR",
      `invalid label selector "app in prod": found 'prod', expected: '('`,
    ],
    [
      { LABEL_PREFIX: "GPU_Serials" },
      "LABEL_PREFIX",
      "label prefix must be a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending alphanumeric",
    ],
    [
      { LABEL_PREFIX: "gpu.kubernetes.io" },
      "LABEL_PREFIX",
      "label prefix must not be under kubernetes.io or k8s.io (reserved for Kubernetes)",
    ],
  ])("%j", (env, key, message) => {
    expect(problemsOf({ env: { ...cluster, ...env } })).toEqual([{ key, message }])
  })

  it("reads Go durations, byte sizes and switches", () => {
    const config = configOf({
      env: {
        ...cluster,
        TIMEOUT: "1m30s",
        RESYNC: "1.5h",
        REPORT_INTERVAL: "0",
        NVIDIA_SMI_MAX_OUTPUT: "512Ki",
        LABELS_ENABLED: "false",
        QPS: "12.5",
      },
    })
    expect(config.kubeExec.timeoutMs).toBe(90_000)
    expect(config.kubeExec.resyncMs).toBe(5_400_000)
    expect(config.inventory.reportIntervalMs).toBe(0)
    expect(config.kubeExec.nvidiaSmi.maxOutputBytes).toBe(512 * 1024)
    expect(config.kubeExec.nodeLabels.enabled).toBe(false)
    expect(config.kubeExec.qps).toBe(12.5)
  })
})

describe("precedence: flags > env > file > defaults", () => {
  const file = "cluster: { name: from-file }\nreceivers:\n  kube_exec:\n    workers: 4\n    timeout: 45s\n"

  it("takes the default when nothing sets a value", () => {
    expect(configOf({ env: cluster }).kubeExec.workers).toBe(16)
  })

  it("takes the file over the default", () => {
    const config = configOf({ file })
    expect(config.kubeExec.workers).toBe(4)
    expect(config.kubeExec.timeoutMs).toBe(45_000)
    expect(config.clusterName).toBe("from-file")
  })

  it("takes the environment over the file", () => {
    const config = configOf({ file, env: { WORKERS: "8", CLUSTER_NAME: "from-env" } })
    expect(config.kubeExec.workers).toBe(8)
    expect(config.kubeExec.timeoutMs).toBe(45_000)
    expect(config.clusterName).toBe("from-env")
  })

  it("takes flags over the environment", () => {
    const config = configOf({
      file,
      env: { WORKERS: "8", CLUSTER_NAME: "from-env", TIMEOUT: "10s" },
      argv: ["--workers", "2", "--cluster-name=from-flag"],
    })
    expect(config.kubeExec.workers).toBe(2)
    expect(config.clusterName).toBe("from-flag")
    expect(config.kubeExec.timeoutMs).toBe(10_000)
  })

  it("records where each value came from", () => {
    const resolved = resolve({ file, env: { WORKERS: "8", TIMEOUT: "10s" }, argv: ["--workers", "2"] })
    if (resolved._tag !== "Success") throw new Error(resolved.failure.format())
    const { origins } = resolved.success
    expect(origins["receivers.kube_exec.workers"]).toEqual({ source: "flag", key: "--workers" })
    expect(origins["receivers.kube_exec.timeout"]).toEqual({ source: "env", key: "TIMEOUT" })
    expect(origins["cluster.name"]).toEqual({ source: "file", key: "cluster.name" })
    expect(origins["receivers.kube_exec.qps"]).toEqual({ source: "default", key: "receivers.kube_exec.qps" })
    expect(origins["service.telemetry.metrics.port"]).toEqual({ source: "default", key: "SERVER_PORT" })
  })

  it("names the problem by the key of the value that won", () => {
    expect(problemsOf({ file, env: { WORKERS: "0" } })).toEqual([{ key: "WORKERS", message: "workers must be > 0" }])
    expect(problemsOf({ file, env: { WORKERS: "0" }, argv: ["--workers=-1"] })).toEqual([
      { key: "--workers", message: "workers must be > 0" },
    ])
    expect(problemsOf({ file: file.replace("workers: 4", "workers: 0") })).toEqual([
      { key: "receivers.kube_exec.workers", message: "workers must be > 0" },
    ])
  })
})

describe("exporter selection", () => {
  it("takes a comma list of types from EXPORTER_TYPE or --exporter", () => {
    expect(configOf({ env: { ...cluster, EXPORTER_TYPE: "stdout, nats" } }).exporters.map((e) => e.id)).toEqual([
      "stdout",
      "nats",
    ])
    const fromFlags = configOf({ env: cluster, argv: ["--exporter", "otlp", "--exporter", "stdout"] })
    expect(fromFlags.exporters.map((e) => e.id)).toEqual(["otlp", "stdout"])
  })

  it("accepts component ids defined in the config file", () => {
    const file = "cluster: { name: c }\nexporters:\n  nats/archive: { stream: ARCHIVE }\n"
    const config = configOf({ file, env: { EXPORTER_TYPE: "stdout,nats/archive" } })
    expect(config.exporters.map((e) => [e.id, e.type])).toEqual([
      ["stdout", "stdout"],
      ["nats/archive", "nats"],
    ])
  })

  it("rejects unknown values, naming them and the known types and ids", () => {
    const file = "cluster: { name: c }\nexporters:\n  nats/archive: {}\n"
    expect(problemsOf({ file, env: { EXPORTER_TYPE: "stdout,kafka" } })).toEqual([
      {
        key: "EXPORTER_TYPE",
        message: `invalid exporter type "kafka" (known types: ${knownTypes}; defined in the config file: nats/archive)`,
      },
    ])
    expect(problemsOf({ env: cluster, argv: ["--exporter=nats/other"] })).toEqual([
      { key: "--exporter", message: `invalid exporter type "nats/other" (known types: ${knownTypes})` },
    ])
  })
})

describe("built-in exporter variables", () => {
  it("map into the section of a selected exporter, over its file values and defaults", () => {
    const file = "cluster: { name: c }\nexporters:\n  nats: { stream: FROM_FILE, subjectPrefix: fleet }\n"
    const config = configOf({
      file,
      env: { EXPORTER_TYPE: "nats", NATS_URL: "nats://a:4222,nats://b:4222", NATS_STREAM: "GPUS" },
      argv: ["--nats-kv-bucket", "where"],
    })
    expect(config.exporters).toEqual([
      {
        id: "nats",
        type: "nats",
        section: {
          url: "nats://a:4222,nats://b:4222",
          subjectPrefix: "fleet",
          stream: "GPUS",
          ...defaultNatsStreamSection,
          kvBucket: "where",
          heartbeatInterval: "30s",
          ...defaultQueueSection,
        },
      },
    ])
  })

  it("are ignored for exporters the pipeline does not use, like the Go original", () => {
    const config = configOf({ env: { ...cluster, NATS_KV_BUCKET: "not a bucket", HTTP_TIMEOUT: "0" } })
    expect(config.exporters.map((e) => e.id)).toEqual(["stdout"])
  })

  it("check NATS authentication and TLS", () => {
    const nats = { ...cluster, EXPORTER_TYPE: "nats" }
    expect(problemsOf({ env: { ...nats, NATS_USER: "u" } })).toEqual([
      { key: "NATS_PASSWORD", message: "NATS user needs a password" },
    ])
    expect(problemsOf({ env: { ...nats, NATS_TOKEN: "t", NATS_CREDS: "/c.creds" } })).toEqual([
      { key: "NATS_TOKEN", message: "NATS authentication takes only one of creds, token, user/password or nkey seed" },
    ])
    expect(problemsOf({ env: { ...nats, NATS_TLS_CERT: "/tls.crt" } })).toEqual([
      { key: "NATS_TLS_KEY", message: "NATS TLS certificate and key must be set together" },
    ])
    expect(problemsOf({ env: { ...nats, NATS_URL: "http://nats:4222", NATS_SUBJECT_PREFIX: "gpu.*" } })).toEqual([
      {
        key: "NATS_SUBJECT_PREFIX",
        message: "NATS subject prefix must be dot-separated tokens without spaces, '*' or '>'",
      },
      { key: "NATS_URL", message: "NATS URL must be a comma list of nats://host:port servers" },
    ])
  })

  it("honour the standard OpenTelemetry variables", () => {
    const config = configOf({
      env: {
        ...cluster,
        EXPORTER_TYPE: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-tenant=fleet",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
        OTEL_EXPORTER_OTLP_TIMEOUT: "5000",
        OTEL_SERVICE_NAME: "gpu-serials-east",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod",
        OTLP_METRICS_INTERVAL: "30s",
      },
    })
    expect(config.exporters[0]?.section).toEqual({
      endpoint: "http://collector:4318",
      headers: { authorization: "Bearer abc", "x-tenant": "fleet" },
      protocol: "http/json",
      compression: "gzip",
      timeout: "5s",
      serviceName: "gpu-serials-east",
      resourceAttributes: { "deployment.environment.name": "prod" },
      metricsInterval: "30s",
      entityEvents: "off",
      ...defaultQueueSection,
    })
    expect(problemsOf({ env: { ...cluster, EXPORTER_TYPE: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } })).toEqual([
      {
        key: "OTEL_EXPORTER_OTLP_PROTOCOL",
        message: 'OTLP protocol must be one of http/protobuf, http/json, got "grpc"',
      },
    ])
  })

  it("never put a secret value into a message", () => {
    const problems = problemsOf({
      env: {
        ...cluster,
        EXPORTER_TYPE: "otlp,nats",
        OTEL_EXPORTER_OTLP_HEADERS: "s3cr3t-header-value",
        NATS_NKEY_SEED: "s3cr3t-seed",
      },
    })
    expect(problems.map((p) => p.key)).toEqual(["NATS_NKEY_SEED", "OTEL_EXPORTER_OTLP_HEADERS"])
    expect(JSON.stringify(problems)).not.toContain("s3cr3t")
  })
})

describe("bounds", () => {
  it.each([
    [{ WORKERS: "1000000000" }, "WORKERS", "workers must be between 1 and 1024, got 1000000000"],
    [{ TIMEOUT: "900h" }, "TIMEOUT", "timeout must be between 1ms and 1h, got 900h"],
    [{ RESYNC: "10ms" }, "RESYNC", "resync period must be 0 (disabled) or between 1s and 24h, got 10ms"],
    [
      { REPORT_INTERVAL: "600h" },
      "REPORT_INTERVAL",
      "report interval must be 0 (disabled) or between 1s and 168h, got 600h",
    ],
    [{ QPS: "1e9" }, "QPS", "qps must be between 0.01 and 10000, got 1000000000"],
    [{ BURST: "100000" }, "BURST", "burst must be between 1 and 10000, got 100000"],
    [
      { NVIDIA_SMI_MAX_OUTPUT: "1Gi" },
      "NVIDIA_SMI_MAX_OUTPUT",
      "nvidia-smi output cap must be between 1Ki and 64Mi, got 1Gi",
    ],
    [
      { NVIDIA_SMI_MAX_OUTPUT: "100" },
      "NVIDIA_SMI_MAX_OUTPUT",
      "nvidia-smi output cap must be between 1Ki and 64Mi, got 100",
    ],
    [{ LEASE_DURATION: "500ms" }, "LEASE_DURATION", "lease duration must be between 1s and 1h, got 500ms"],
  ])("%j → %s: %s", (env, key, message) => {
    expect(problemsOf({ env: { ...cluster, ...env } })).toEqual([{ key, message }])
  })

  it("accept both ends of a range and 0 where 0 disables", () => {
    const config = configOf({ env: { ...cluster, WORKERS: "1024", RESYNC: "0", REPORT_INTERVAL: "168h", QPS: "0.01" } })
    expect(config.kubeExec).toMatchObject({ workers: 1024, resyncMs: 0, qps: 0.01 })
    expect(config.inventory.reportIntervalMs).toBe(168 * 3_600_000)
  })

  it("apply to the config file and to exporter sections, under the file's keys", () => {
    const file = [
      "receivers: { kube_exec: { workers: 5000 } }",
      "exporters: { nats: { queueSize: 2000000, retry: { maxElapsed: 720h } } }",
      "service: { pipelines: { gpus: { exporters: [nats] } } }",
    ].join("\n")
    expect(problemsOf({ file, env: cluster })).toEqual([
      { key: "exporters.nats.queueSize", message: "queue size must be between 1 and 1000000, got 2000000" },
      { key: "exporters.nats.retry.maxElapsed", message: "retry max elapsed must be between 1ms and 24h, got 720h" },
      { key: "receivers.kube_exec.workers", message: "workers must be between 1 and 1024, got 5000" },
    ])
  })
})

describe("leader election", () => {
  const enabled = { ...cluster, LEADER_ELECTION: "true", POD_NAME: "gpu-serials-0" }

  it("is accepted, and without a pod name the identity is left to the hostname", () => {
    expect(configOf({ env: enabled }).leaderElection).toMatchObject({ enabled: true, identity: "gpu-serials-0" })
    expect(configOf({ env: { ...enabled, POD_NAME: undefined } }).leaderElection).toMatchObject({ identity: "" })
  })

  it("needs a lease and lease > renew > retry", () => {
    expect(problemsOf({ env: { ...enabled, LEASE_DURATION: "10s" } })).toEqual([
      { key: "LEASE_DURATION", message: "lease duration > renew deadline > retry period must hold" },
    ])
    expect(problemsOf({ env: { ...enabled, LEASE_NAME: "", LEASE_NAMESPACE: "" } })).toEqual([
      { key: "LEASE_NAME", message: "lease name must be specified when leader election is enabled" },
      { key: "LEASE_NAMESPACE", message: "lease namespace must be specified when leader election is enabled" },
    ])
  })

  it("is checked only when enabled", () => {
    expect(configOf({ env: { ...cluster, LEASE_DURATION: "1s" } }).leaderElection.enabled).toBe(false)
  })

  it("resolves into a typed section", () => {
    expect(
      configOf({
        env: { ...cluster, LEASE_DURATION: "30s", LEASE_NAMESPACE: "gpu-serials", POD_NAME: "gpu-serials-0" },
      }).leaderElection,
    ).toEqual({
      enabled: false,
      leaseName: "gpuid-leader",
      leaseNamespace: "gpu-serials",
      leaseDurationMs: 30_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      identity: "gpu-serials-0",
    })
  })
})
