import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import type { Setting } from "../../config/Setting.ts"
import {
  DAY,
  HOUR,
  isUrlWithScheme,
  notNegative,
  optionalHttpUrl,
  positive,
  required,
  SECOND,
} from "../../config/SettingRules.ts"
import { durationType, enumType, millisType, pairsType, stringType } from "../../config/SettingType.ts"
import {
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "../exporterhelper/QueueSettings.ts"

/**
 * The `otlp` exporter's settings (section `exporters.otlp`), fed by the standard `OTEL_EXPORTER_OTLP_*`
 * variables, and the queue every exporter has.
 */

export const otlpEndpointSetting: Setting<string> = {
  key: "endpoint",
  env: "OTEL_EXPORTER_OTLP_ENDPOINT",
  flag: "--otlp-endpoint",
  type: stringType,
  default: "http://localhost:4318",
  secret: "userinfo",
  label: "OTLP endpoint",
  description: "Base URL of the OTLP/HTTP receiver (logs go to /v1/logs, metrics to /v1/metrics).",
  check: (value) =>
    isUrlWithScheme(value, ["http:", "https:"]) ? undefined : "OTLP endpoint must be an http:// or https:// URL",
}

export const otlpLogsEndpointSetting: Setting<string> = {
  key: "logsEndpoint",
  env: "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  flag: "--otlp-logs-endpoint",
  type: stringType,
  secret: "userinfo",
  label: "OTLP logs endpoint",
  description: "Full URL for logs, used as is; unset means <endpoint>/v1/logs.",
  check: optionalHttpUrl("OTLP logs endpoint must be an http:// or https:// URL"),
}

export const otlpHeadersSetting: Setting<Readonly<Record<string, string>>> = {
  key: "headers",
  env: "OTEL_EXPORTER_OTLP_HEADERS",
  type: pairsType,
  default: {},
  secret: "value",
  label: "OTLP headers",
  description: "Headers sent with every export (k=v,k2=v2, values percent-encoded); values are secret.",
}

export const otlpProtocolSetting: Setting<"http/protobuf" | "http/json"> = {
  key: "protocol",
  env: "OTEL_EXPORTER_OTLP_PROTOCOL",
  flag: "--otlp-protocol",
  type: enumType(["http/protobuf", "http/json"]),
  default: "http/protobuf",
  secret: "none",
  label: "OTLP protocol",
  description: "OTLP encoding over HTTP (gRPC is not supported).",
}

export const otlpCompressionSetting: Setting<"gzip" | "none"> = {
  key: "compression",
  env: "OTEL_EXPORTER_OTLP_COMPRESSION",
  flag: "--otlp-compression",
  type: enumType(["gzip", "none"]),
  default: "none",
  secret: "none",
  label: "OTLP compression",
  description: "Compression of export requests.",
}

export const otlpTimeoutSetting: Setting<number> = {
  key: "timeout",
  env: "OTEL_EXPORTER_OTLP_TIMEOUT",
  flag: "--otlp-timeout",
  type: millisType,
  default: 10_000,
  secret: "none",
  label: "OTLP timeout",
  bounds: { min: 1, max: HOUR },
  description: "Deadline of one export request (milliseconds as in the OpenTelemetry variable, or a duration).",
  check: positive("OTLP timeout must be > 0"),
}

export const otlpServiceNameSetting: Setting<string> = {
  key: "serviceName",
  env: "OTEL_SERVICE_NAME",
  flag: "--otlp-service-name",
  type: stringType,
  default: "gpu-serials",
  secret: "none",
  label: "OTLP service name",
  description: "service.name of the exported resources.",
  check: required("OTLP service name must not be empty"),
}

export const otlpResourceAttributesSetting: Setting<Readonly<Record<string, string>>> = {
  key: "resourceAttributes",
  env: "OTEL_RESOURCE_ATTRIBUTES",
  type: pairsType,
  default: {},
  secret: "none",
  label: "OTLP resource attributes",
  description: "Extra resource attributes (k=v,k2=v2, values percent-encoded).",
}

export const otlpMetricsIntervalSetting: Setting<number> = {
  key: "metricsInterval",
  env: "OTLP_METRICS_INTERVAL",
  flag: "--otlp-metrics-interval",
  type: durationType,
  default: 60_000,
  secret: "none",
  label: "OTLP metrics interval",
  bounds: { min: SECOND, max: DAY, zeroDisables: true },
  description: "How often metrics are pushed over OTLP; 0 disables OTLP metrics.",
  check: notNegative("OTLP metrics interval must be >= 0 (0 disables OTLP metrics)"),
}

/** How GPUs are sent as OpenTelemetry entities besides their log records. */
export type EntityEventForm = "off" | "legacy" | "spec"

export const otlpEntityEventsSetting: Setting<EntityEventForm> = {
  key: "entityEvents",
  env: "OTLP_ENTITY_EVENTS",
  flag: "--otlp-entity-events",
  type: enumType(["off", "legacy", "spec"]),
  default: "off",
  secret: "none",
  label: "OTLP entity events",
  description:
    "Also send each GPU as an OpenTelemetry entity (hw.gpu, id = UUID): legacy as the Collector's experimentalmetricmetadata writes them (otel.entity.*), spec as the entity events specification (entity.state, entity.delete), or off.",
}

/** The `otlp` exporter's section, fed by the standard OTEL_EXPORTER_OTLP_* variables. */
export interface OtlpExporterConfig {
  /** Base URL; logs go to `<endpoint>/v1/logs` unless `logsEndpoint` is set. */
  readonly endpoint: string
  /** Full URL for logs, used as is. */
  readonly logsEndpoint?: string
  /** Secret values. */
  readonly headers: Readonly<Record<string, string>>
  readonly protocol: "http/protobuf" | "http/json"
  readonly compression: "gzip" | "none"
  readonly timeoutMs: number
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** 0: no metrics over OTLP. */
  readonly metricsIntervalMs: number
  readonly entityEvents: EntityEventForm
  readonly queue: QueueSettings
}

/** The exporter's settings, in the order of the configuration reference. */
export const otlpSettings: ComponentSettings<OtlpExporterConfig> = {
  settings: [
    otlpEndpointSetting,
    otlpLogsEndpointSetting,
    otlpHeadersSetting,
    otlpProtocolSetting,
    otlpCompressionSetting,
    otlpTimeoutSetting,
    otlpServiceNameSetting,
    otlpResourceAttributesSetting,
    otlpMetricsIntervalSetting,
    otlpEntityEventsSetting,
    ...queueSettingList,
  ],
  rules: [queueSettingsRule],
  build: (values) => {
    const logsEndpoint = values.get(otlpLogsEndpointSetting)
    return {
      endpoint: values.require(otlpEndpointSetting),
      ...(logsEndpoint === undefined ? {} : { logsEndpoint }),
      headers: values.require(otlpHeadersSetting),
      protocol: values.require(otlpProtocolSetting),
      compression: values.require(otlpCompressionSetting),
      timeoutMs: values.require(otlpTimeoutSetting),
      serviceName: values.require(otlpServiceNameSetting),
      resourceAttributes: values.require(otlpResourceAttributesSetting),
      metricsIntervalMs: values.require(otlpMetricsIntervalSetting),
      entityEvents: values.require(otlpEntityEventsSetting),
      queue: queueSettingsOf(values),
    }
  },
}
