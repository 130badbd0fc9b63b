// A third-party exporter module whose factory is its default export.
import type { ExporterFactory } from "../../../src/pipeline/Exporter.ts"
import { type MemoryConfig, factory as memory } from "./memory-exporter.ts"

const audit: ExporterFactory<MemoryConfig> = { ...memory, type: "audit", defaultConfig: { label: "audit" } }

export default audit
