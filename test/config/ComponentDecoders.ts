import { decodeSection } from "../../src/config/ComponentSettings.ts"
import { natsSettings } from "../../src/exporter/nats/NatsConfig.ts"
import { otlpSettings } from "../../src/exporter/otlp/OtlpConfig.ts"

/** A `nats` section checked on its own, as the exporter's factory checks it. */
export const decodeNatsExporterConfig = (section: unknown) => decodeSection(natsSettings, section)

/** An `otlp` section checked on its own, as the exporter's factory checks it. */
export const decodeOtlpExporterConfig = (section: unknown) => decodeSection(otlpSettings, section)
