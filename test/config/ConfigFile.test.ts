import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { defaultNatsStreamSection, defaultQueueSection } from "./QueueSectionFixture.ts"
import { configOf, problemsOf } from "./ResolveFixture.ts"

const lines = (...text: ReadonlyArray<string>): string => `${text.join("\n")}\n`

describe("YAML syntax", () => {
  it("reports errors with the file, line and column under the key `config file`", () => {
    const problems = problemsOf({
      file: lines("cluster:", "  name: prod", "receivers:", "  kube_exec:", "    workers: 4", "   timeout: 3s"),
    })
    expect(problems).toEqual([
      {
        key: "config file",
        message: "gpu-serials.yaml, line 6, column 1: All mapping items must start at the same column",
      },
    ])
  })

  it("rejects duplicate keys with their position", () => {
    expect(problemsOf({ file: lines("cluster:", "  name: a", "  name: b") })).toEqual([
      { key: "config file", message: "gpu-serials.yaml, line 3, column 3: Map keys must be unique" },
    ])
  })

  it("refuses a value given a tag outside YAML's core schema, naming its key", () => {
    expect(
      problemsOf({
        file: lines("cluster:", "  name: !js/function prod", "receivers: { kube_exec: { workers: !!int 4 } }"),
      }),
    ).toEqual([
      {
        key: "cluster.name",
        message:
          "gpu-serials.yaml, line 2, column 22: YAML tag !js/function is not one the config file reads (it takes plain values, lists and mappings)",
      },
    ])
  })

  it("says in its own words what the YAML reader would say in its API's", () => {
    const messages = (file: string) =>
      problemsOf({ file, env: { CLUSTER_NAME: "c" } }).map((problem) => problem.message)
    expect(messages(lines("cluster: { name: a }", "---", "cluster: { name: b }"))).toEqual([
      "gpu-serials.yaml, line 2, column 1: the file holds more than one YAML document (a line '---' starts another); the config file is one document",
    ])
    const deep = messages(`cluster: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`)
    expect(deep).toHaveLength(1)
    expect(deep[0]).toMatch(/^gpu-serials\.yaml, line 1, column \d+: the file nests deeper than the config file may/)
    const bomb = ["a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    for (const name of ["b", "c", "d"])
      bomb.push(
        `${name}: &${name} [${Array(10)
          .fill(`*${String.fromCharCode(name.charCodeAt(0) - 1)}`)
          .join(", ")}]`,
      )
    expect(messages(lines(...bomb))).toEqual([
      "gpu-serials.yaml: the file expands more than 100 aliases (*name); write the values out",
    ])
    for (const message of [...messages(lines("a: 1", "---", "b: 2")), ...deep]) {
      expect(message).not.toMatch(/YAML\.|parseAllDocuments|call stack|resource exhaustion/i)
    }
  })

  it("still reports the environment's problems with a broken file", () => {
    const problems = problemsOf({ file: "cluster: [", env: { WORKERS: "0", CLUSTER_NAME: "c" } })
    expect(problems.map((p) => p.key)).toEqual(["WORKERS", "config file"])
  })

  it("needs a mapping at the top", () => {
    expect(problemsOf({ file: "- receivers\n", env: { CLUSTER_NAME: "c" } })).toEqual([
      { key: "config file", message: "must be a mapping with cluster, receivers, processors, exporters and service" },
    ])
  })

  it("treats an empty file as all defaults", () => {
    expect(configOf({ file: "# nothing yet\n", env: { CLUSTER_NAME: "c" } }).kubeExec.workers).toBe(16)
  })
})

describe("keys", () => {
  it("rejects unknown keys by their dotted path, with a hint", () => {
    const problems = problemsOf({
      file: lines(
        "cluster: { name: c }",
        "reciever: {}",
        "receivers:",
        "  kube_exec:",
        "    wokers: 4",
        "    nvidiaSmi: { mode: xml, maxOuput: 1Mi }",
        "service:",
        "  telemetry: { logs: { level: info, format: json } }",
      ),
    })
    expect(problems).toEqual([
      { key: "receivers.kube_exec.nvidiaSmi.maxOuput", message: 'unknown key (did you mean "maxOutput"?)' },
      { key: "receivers.kube_exec.wokers", message: 'unknown key (did you mean "workers"?)' },
      { key: "reciever", message: 'unknown key (did you mean "receivers"?)' },
      { key: "service.telemetry.logs.format", message: "unknown key" },
    ])
  })

  it("rejects unknown receivers and processors", () => {
    expect(
      problemsOf({ file: lines("cluster: { name: c }", "receivers: { otlp: {} }", "processors: { batch: {} }") }),
    ).toEqual([
      { key: "processors.batch", message: 'unknown processor type "batch" (known: inventory, fleet)' },
      { key: "receivers.otlp", message: 'unknown receiver type "otlp" (known: kube_exec, nats)' },
    ])
  })

  it("rejects unknown keys in the sections of built-in exporters with settings", () => {
    expect(
      problemsOf({
        file: lines("cluster: { name: c }", "exporters:", "  nats: { urll: x, tls: { cert: a, key: b, pem: c } }"),
      }),
    ).toEqual([
      { key: "exporters.nats.tls.pem", message: "unknown key" },
      { key: "exporters.nats.urll", message: 'unknown key (did you mean "url"?)' },
    ])
  })

  it("reports values of the wrong type by their dotted path", () => {
    const problems = problemsOf({
      file: lines(
        "cluster: { name: c }",
        "receivers:",
        "  kube_exec:",
        "    workers: many",
        "    timeout: 30",
        "    qps: 0",
        "    nodeLabels: true",
        "    labelSelector: [a, b]",
      ),
    })
    expect(problems).toEqual([
      { key: "receivers.kube_exec.labelSelector", message: "label selector must be a string, got a list" },
      { key: "receivers.kube_exec.nodeLabels", message: "must be a mapping" },
      { key: "receivers.kube_exec.qps", message: "qps must be > 0" },
      {
        key: "receivers.kube_exec.timeout",
        message: 'timeout must be a duration such as 30s or 1m30s: missing unit in duration "30"',
      },
      { key: "receivers.kube_exec.workers", message: 'workers must be an integer, got "many"' },
    ])
  })

  it("names a default by its file path when its section is in the file", () => {
    expect(problemsOf({ file: "cluster: {}\n" })).toEqual([
      { key: "cluster.name", message: "cluster name must be specified" },
    ])
    expect(problemsOf({ file: "receivers: { kube_exec: {} }\n" })).toEqual([
      { key: "CLUSTER_NAME", message: "cluster name must be specified" },
    ])
  })
})

describe("pipelines", () => {
  const head = lines("cluster: { name: c }", "receivers: { kube_exec: }", "processors: { inventory: }")

  it("must reference defined components", () => {
    const file = `${head}exporters: { stdout: }\nservice: { pipelines: { gpus: { receivers: [kube_exec], processors: [inventory], exporters: [stdout, nats] } } }\n`
    expect(problemsOf({ file })).toEqual([
      {
        key: "service.pipelines.gpus.exporters",
        message: 'exporter "nats" is used in pipeline "gpus" but not defined',
      },
    ])
  })

  it("must name a receiver and a processor of the build, defined", () => {
    const file = lines(
      "cluster: { name: c }",
      "exporters: { stdout: }",
      "service: { pipelines: { gpus: { receivers: [kube_exec], processors: [], exporters: [stdout] } } }",
    )
    expect(problemsOf({ file })).toEqual([
      { key: "service.pipelines.gpus.processors", message: 'pipeline "gpus" needs the inventory or fleet processor' },
      {
        key: "service.pipelines.gpus.receivers",
        message: 'receiver "kube_exec" is used in pipeline "gpus" but not defined',
      },
    ])
  })

  it("has exactly one receiver and one processor", () => {
    const file = `${head}exporters: { stdout: }\nservice: { pipelines: { gpus: { receivers: [kube_exec, kube_exec], processors: [inventory, inventory], exporters: [stdout] } } }\n`
    expect(problemsOf({ file })).toEqual([
      {
        key: "service.pipelines.gpus.processors",
        message: 'pipeline "gpus" needs exactly one processor, got 2 (inventory, inventory)',
      },
      {
        key: "service.pipelines.gpus.receivers",
        message: 'pipeline "gpus" needs exactly one receiver, got 2 (kube_exec, kube_exec)',
      },
    ])
  })

  it("has one pipeline, gpus, with at least one exporter", () => {
    const file = `${head}exporters: { stdout: }\nservice: { pipelines: { logs: {}, gpus: { exporters: [], extra: 1 } } }\n`
    expect(problemsOf({ file })).toEqual([
      { key: "service.pipelines.gpus.exporters", message: 'pipeline "gpus" needs at least one exporter' },
      { key: "service.pipelines.gpus.extra", message: "unknown key" },
      { key: "service.pipelines.logs", message: 'unknown pipeline "logs" (the service has one pipeline, "gpus")' },
    ])
  })

  it("selects the exporters it lists, in order, each with its section", () => {
    const file = `${head}exporters:\n  stdout:\n  nats/archive: { stream: ARCHIVE }\nservice: { pipelines: { gpus: { exporters: [nats/archive, stdout] } } }\n`
    const config = configOf({ file })
    expect(config.exporters).toEqual([
      {
        id: "nats/archive",
        type: "nats",
        section: {
          url: "nats://127.0.0.1:4222",
          subjectPrefix: "gpu.serials",
          stream: "ARCHIVE",
          ...defaultNatsStreamSection,
          kvBucket: "gpu_serials",
          heartbeatInterval: "30s",
          ...defaultQueueSection,
        },
      },
      { id: "stdout", type: "stdout", section: defaultQueueSection },
    ])
  })
})

describe("exporter sections", () => {
  it("accept third-party exporters that name their module, section untouched", () => {
    const file = lines(
      "cluster: { name: c }",
      "exporters:",
      '  kafka: { module: "@acme/gpu-serials-kafka", brokers: [k1:9092], anything: { goes: true } }',
      '  kafka/audit: { module: "./exporters/kafka.ts" }',
      "service: { pipelines: { gpus: { exporters: [kafka, kafka/audit] } } }",
    )
    expect(configOf({ file }).exporters).toEqual([
      {
        id: "kafka",
        type: "kafka",
        module: "@acme/gpu-serials-kafka",
        section: { brokers: ["k1:9092"], anything: { goes: true } },
      },
      { id: "kafka/audit", type: "kafka", module: "./exporters/kafka.ts", section: {} },
    ])
  })

  it("reject unknown types without a module, empty modules and malformed ids", () => {
    const file = lines(
      "cluster: { name: c }",
      "exporters:",
      "  kafka: { brokers: [k1] }",
      '  s3: { module: "" }',
      "  Nats/x: {}",
      "  nats/a.b: {}",
    )
    expect(problemsOf({ file })).toEqual([
      {
        key: "exporters.Nats/x",
        message: "exporter id must be <type> or <type>/<name> (type: a-z, 0-9, '_'; name: letters, digits, '_', '-')",
      },
      {
        key: "exporters.kafka",
        message:
          'unknown exporter type "kafka" (known types: stdout, otlp, nats, http, postgres; a third-party exporter names its package in "module")',
      },
      {
        key: "exporters.nats/a.b",
        message: "exporter id must be <type> or <type>/<name> (type: a-z, 0-9, '_'; name: letters, digits, '_', '-')",
      },
      { key: "exporters.s3.module", message: "module must name an npm package or a path to one" },
    ])
  })

  it("check a built-in exporter's section with that exporter's own settings", () => {
    const file = lines("cluster: { name: c }", "exporters: { stdout: { pretty: true } }")
    expect(problemsOf({ file })).toEqual([
      { key: "exporters.stdout.pretty", message: 'unknown key (did you mean "retry"?)' },
    ])
  })

  it("are all checked, used or not, as a Collector does", () => {
    const file = lines("cluster: { name: c }", "exporters: { stdout: , otlp: { endpoint: collector } }")
    expect(problemsOf({ file })).toEqual([
      { key: "exporters.otlp.endpoint", message: "OTLP endpoint must be an http:// or https:// URL" },
    ])
  })
})

describe("the example config/gpu-serials.yaml", () => {
  it("is valid and says what it shows", () => {
    const text = readFileSync(new URL("../../config/gpu-serials.yaml", import.meta.url), "utf8")
    const config = configOf({ file: text })
    expect(config.clusterName).toBe("prod-east")
    expect(config.exporters.map((e) => e.id)).toEqual(["stdout"])
    expect(config.kubeExec.workers).toBe(16)
  })
})
