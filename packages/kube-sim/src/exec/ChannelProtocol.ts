/**
 * The Kubernetes remote-command channel protocol over WebSocket: every binary message starts with its
 * channel byte. v4 carries the exit status as a JSON `Status` on the error channel; v5 adds a CLOSE
 * signal a client sends to half-close a stream.
 */
export const channelProtocols = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const
export type ChannelProtocol = (typeof channelProtocols)[number]

export const Channel = {
  stdin: 0,
  stdout: 1,
  stderr: 2,
  error: 3,
  resize: 4,
  close: 255,
} as const

/**
 * Stdout and stderr go out in frames of 32 KiB, as the kubelet's copy buffer cuts them; output is
 * written straight into frame-sized blocks with one byte in front for the channel.
 */
export const frameLayout = { blockBytes: 32 * 1024, headroom: 1 } as const

export const frame = (channel: number, payload: Buffer | string): Buffer => {
  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload
  const message = Buffer.allocUnsafe(body.length + 1)
  message[0] = channel
  body.copy(message, 1)
  return message
}

/** Picks the first protocol, in the client's order of preference, that the server speaks. */
export const negotiate = (offered: string | undefined): ChannelProtocol | undefined => {
  const protocols = (offered ?? "").split(",").map((protocol) => protocol.trim())
  return protocols.find((protocol): protocol is ChannelProtocol =>
    (channelProtocols as ReadonlyArray<string>).includes(protocol),
  )
}

/** The status the kubelet writes when the command exits 0. */
export const successStatus = (): string => JSON.stringify({ metadata: {}, status: "Success" })

/** The status of a non-zero exit: clients read the code from `details.causes[reason=ExitCode]`. */
export const exitStatus = (argv: ReadonlyArray<string>, exitCode: number): string =>
  JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${argv.join(" ")}], exit code ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  })

/** The status when the runtime could not start the command at all (no such executable). */
export const runtimeFailureStatus = (message: string): string =>
  JSON.stringify({
    metadata: {},
    status: "Failure",
    message: `Internal error occurred: error executing command in container: ${message}`,
    reason: "InternalError",
    details: { causes: [{ message: `error executing command in container: ${message}` }] },
    code: 500,
  })
