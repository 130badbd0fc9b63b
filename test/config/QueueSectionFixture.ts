/** The queue keys of a resolved `otlp` or `nats` section with every default, as the config file writes them. */
export const defaultQueueSection = {
  queueSize: 10_000,
  batchSize: 500,
  writeTimeout: "5s",
  retry: {
    initialInterval: "1s",
    maxInterval: "30s",
    multiplier: 1.5,
    randomizationFactor: 0.5,
    maxAttempts: 0,
    maxElapsed: "2m",
  },
}

/** The stream keys of a resolved `nats` section with every default, as the config file writes them. */
export const defaultNatsStreamSection = {
  streamCreate: true,
  streamExpect: true,
  duplicateWindow: "2m",
  retention: "limits",
  maxAge: "168h",
  maxBytes: "1Gi",
}
