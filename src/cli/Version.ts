import packageJson from "../../package.json" with { type: "json" }

/** The service version, as published in records' OTLP resources and by `gpu-serials version`. */
export const serviceVersion: string = packageJson.version
