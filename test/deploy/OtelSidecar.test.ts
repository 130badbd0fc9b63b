import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { parseGoDuration } from "../../src/config/GoDuration.ts"
import { repositoryRoot } from "../cli/GpuSerialsCli.ts"
import {
  type Container,
  deploymentOf,
  gpuSerialsContainer,
  kustomize,
  ofKind,
  resolvedEnvironment,
  valuesOf,
} from "./RenderedManifests.ts"

/** The parts of a Collector configuration these checks read. */
interface CollectorConfig {
  readonly extensions?: Readonly<Record<string, { readonly endpoint?: string } | null>>
  readonly receivers: Readonly<
    Record<string, { readonly protocols?: { readonly http?: { readonly endpoint: string } } }>
  >
  readonly processors: Readonly<Record<string, Readonly<Record<string, unknown>> | null>>
  readonly exporters: Readonly<Record<string, ExporterConfig | null>>
  readonly service: {
    readonly extensions?: ReadonlyArray<string>
    readonly pipelines: Readonly<
      Record<
        string,
        {
          readonly receivers: ReadonlyArray<string>
          readonly processors?: ReadonlyArray<string>
          readonly exporters: ReadonlyArray<string>
        }
      >
    >
  }
}

interface ExporterConfig {
  readonly endpoint?: string
  readonly timeout?: string
  readonly sending_queue?: {
    readonly enabled?: boolean
    readonly sizer?: string
    readonly queue_size?: number
    readonly batch?: {
      readonly flush_timeout?: string
      readonly min_size?: number
      readonly max_size?: number
      readonly sizer?: string
    }
  }
}

/**
 * Component types the Collector renamed, with their current names (open-telemetry/opentelemetry-collector
 * 0.144: `otlphttp` → `otlp_http`, `otlp` exporter → `otlp_grpc`; 0.86: `logging` → `debug`).
 */
const deprecatedExporterTypes: Readonly<Record<string, string>> = {
  otlphttp: "otlp_http",
  otlp: "otlp_grpc",
  logging: "debug",
}

/** Exporters that send over the network, and so need a queue that batches. */
const networkExporterTypes = ["otlp_http", "otlp_grpc", "prometheusremotewrite", "awss3"]

/** About what the Collector's process uses beyond the memory_limiter's limit_mib (its documentation). */
const PROCESS_OVERHEAD_MIB = 50

const typeOf = (componentId: string) => componentId.split("/")[0] ?? componentId

const mebibytes = (quantity: string | undefined): number => {
  const match = /^(\d+)(Mi|Gi)(B)?$/.exec(quantity ?? "")
  if (match === null) throw new Error(`not a Mi or Gi quantity: ${quantity}`)
  return Number(match[1]) * (match[2] === "Gi" ? 1024 : 1)
}

const millisOf = (duration: string | undefined): number => {
  const parsed = parseGoDuration(duration ?? "")
  if (Result.isFailure(parsed)) throw new Error(`not a duration: ${duration}`)
  return parsed.success
}

describe("deploy/examples/otel-sidecar: gpu-serials with an OpenTelemetry Collector sidecar", () => {
  const manifests = kustomize("deploy/examples/otel-sidecar")
  const deployment = deploymentOf(manifests)
  const pod = deployment.spec.template.spec
  const namespace = deployment.metadata.namespace ?? ""
  const sidecar = (pod.initContainers ?? []).find((container) => container.name === "otel-collector") as Container
  const volume = (pod.volumes ?? []).find((candidate) => candidate.configMap !== undefined)
  const configMap = ofKind(manifests, "ConfigMap").find(
    (manifest) => manifest.metadata.name === volume?.configMap?.name,
  )
  const configText = configMap === undefined ? "" : (valuesOf(configMap)["config.yaml"] ?? "")
  const config = parse(configText) as CollectorConfig
  const sidecarEnv = resolvedEnvironment(manifests, namespace, sidecar)

  it("runs the repository's Collector configuration, mounted where the sidecar reads it", () => {
    expect(configText).toBe(readFileSync(`${repositoryRoot}deploy/components/otel-sidecar/otel-collector.yaml`, "utf8"))
    expect(
      configText,
      "deploy/components/otel-sidecar/otel-collector.yaml must be a copy of otel-collector.yaml at the repository root: copy it over",
    ).toBe(readFileSync(`${repositoryRoot}otel-collector.yaml`, "utf8"))
    const mount = sidecar.volumeMounts?.find((candidate) => candidate.name === volume?.name)
    expect(sidecar.args).toEqual([`--config=${mount?.mountPath}/config.yaml`])
  })

  it("starts the Collector before gpu-serials and stops it after, as a native sidecar", () => {
    expect(sidecar.restartPolicy).toBe("Always")
    expect(sidecar.startupProbe?.httpGet).toBeDefined()
  })

  it("points gpu-serials' otlp exporter at the sidecar's receiver on localhost", () => {
    const env = resolvedEnvironment(manifests, namespace, gpuSerialsContainer(pod))
    expect(env.EXPORTER_TYPE).toBe("otlp")
    const receiver = config.receivers.otlp?.protocols?.http?.endpoint
    expect(receiver).toBe("localhost:4318")
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(`http://${receiver}`)
  })

  it("names every component by its current name", () => {
    const exporterTypes = Object.keys(config.exporters).map(typeOf)
    for (const deprecated of Object.keys(deprecatedExporterTypes)) expect(exporterTypes).not.toContain(deprecated)
    expect(exporterTypes).toContain("otlp_http")
  })

  it("wires every component it defines into the service, and defines every one it wires", () => {
    const pipelines = Object.values(config.service.pipelines)
    const used = {
      receivers: pipelines.flatMap((pipeline) => pipeline.receivers),
      processors: pipelines.flatMap((pipeline) => pipeline.processors ?? []),
      exporters: pipelines.flatMap((pipeline) => pipeline.exporters),
      extensions: config.service.extensions ?? [],
    }
    expect(new Set(used.receivers)).toEqual(new Set(Object.keys(config.receivers)))
    expect(new Set(used.processors)).toEqual(new Set(Object.keys(config.processors)))
    expect(new Set(used.exporters)).toEqual(new Set(Object.keys(config.exporters)))
    expect(new Set(used.extensions)).toEqual(new Set(Object.keys(config.extensions ?? {})))
  })

  it("limits memory first in every pipeline and batches in the exporters' queues, not in a batch processor", () => {
    for (const [name, pipeline] of Object.entries(config.service.pipelines)) {
      expect(pipeline.processors?.[0], name).toBe("memory_limiter")
      expect((pipeline.processors ?? []).map(typeOf), name).not.toContain("batch")
    }
    const networkExporters = Object.entries(config.exporters).filter(([id]) =>
      networkExporterTypes.includes(typeOf(id)),
    )
    expect(networkExporters.length).toBeGreaterThan(0)
    for (const [id, exporter] of networkExporters) {
      const queue = exporter?.sending_queue
      expect(queue?.enabled, id).toBe(true)
      const batch = queue?.batch
      expect(millisOf(batch?.flush_timeout), id).toBeGreaterThan(0)
      expect(batch?.min_size ?? 0, id).toBeGreaterThan(0)
      expect(batch?.max_size ?? 0, id).toBeGreaterThanOrEqual(batch?.min_size ?? 0)
      if ((batch?.sizer ?? queue?.sizer) === (queue?.sizer ?? "requests")) {
        expect(batch?.min_size ?? 0, id).toBeLessThanOrEqual(queue?.queue_size ?? 0)
      }
    }
  })

  it("sizes the memory_limiter and GOMEMLIMIT to the sidecar's memory limit", () => {
    const limit = mebibytes(sidecar.resources?.limits?.memory)
    const limiter = config.processors.memory_limiter as { limit_mib: number; spike_limit_mib: number }
    const goMemLimit = mebibytes(sidecarEnv.GOMEMLIMIT)
    const softLimit = limiter.limit_mib - limiter.spike_limit_mib
    // soft limit (refuse data) < GOMEMLIMIT (collect harder) <= hard limit (force GC) < container limit (OOM kill)
    expect(softLimit).toBeLessThan(goMemLimit)
    expect(goMemLimit).toBeLessThanOrEqual(limiter.limit_mib)
    expect(limiter.limit_mib + PROCESS_OVERHEAD_MIB).toBeLessThanOrEqual(limit)
    expect(goMemLimit).toBe(Math.floor(limit * 0.8))
    expect(limiter.spike_limit_mib).toBe(Math.round(limiter.limit_mib * 0.2))
  })

  it("sets every environment variable the configuration references (env:NAME) in the sidecar's environment", () => {
    const referenced = [...configText.matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1] ?? "")
    expect(referenced.length).toBeGreaterThan(0)
    const declared = (sidecar.env ?? []).map((variable) => variable.name)
    for (const name of referenced) expect(declared, name).toContain(name)
  })

  it("answers the kubelet's probes on the health_check extension's port", () => {
    const endpoint = config.extensions?.health_check?.endpoint ?? ""
    const port = Number(endpoint.split(":").at(-1))
    const named = sidecar.ports?.find((candidate) => candidate.containerPort === port)
    expect(named?.name).toBeDefined()
    for (const probe of [sidecar.startupProbe, sidecar.livenessProbe, sidecar.readinessProbe]) {
      expect(probe?.httpGet?.port).toBe(named?.name)
    }
    // The kubelet connects to the pod's IP, never to its localhost.
    expect(endpoint).toMatch(/^\$\{env:POD_IP\}:\d+$/)
    expect(sidecar.env?.find((variable) => variable.name === "POD_IP")?.valueFrom?.fieldRef?.fieldPath).toBe(
      "status.podIP",
    )
  })

  it("leaves the Collector one export attempt of time after gpu-serials' shutdown, within the grace period", () => {
    const shutdown = millisOf(gpuSerialsContainer(pod).env?.find((env) => env.name === "SHUTDOWN_TIMEOUT")?.value)
    const attempts = Object.values(config.exporters).map((exporter) => millisOf(exporter?.timeout ?? "5s"))
    expect(shutdown + Math.max(...attempts)).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds * 1000)
  })
})
