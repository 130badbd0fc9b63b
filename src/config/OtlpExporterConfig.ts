import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { exporterQueueSettingsOf } from "./ExporterQueueSettings.ts"
import { decodeExporterSection } from "./ExporterSection.ts"
import type { QueueSettings } from "./QueueSettings.ts"
import {
  otlpCompressionSetting,
  otlpEndpointSetting,
  otlpHeadersSetting,
  otlpLogsEndpointSetting,
  otlpMetricsIntervalSetting,
  otlpProtocolSetting,
  otlpQueueSettings,
  otlpResourceAttributesSetting,
  otlpServiceNameSetting,
  otlpTimeoutSetting,
} from "./Settings.ts"

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
  readonly queue: QueueSettings
}

/** Checks an `otlp` section; problems carry keys relative to the section. */
export const decodeOtlpExporterConfig = (
  section: unknown,
): Result.Result<OtlpExporterConfig, ReadonlyArray<ConfigProblem>> =>
  Result.map(decodeExporterSection("otlp", section), (values) => {
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
      queue: exporterQueueSettingsOf(values, otlpQueueSettings),
    }
  })
