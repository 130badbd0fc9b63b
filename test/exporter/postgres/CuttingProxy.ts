import { createServer, type Server, type Socket } from "node:net"

/**
 * A TCP proxy to PostgreSQL in the test process that can cut its connections: `cutOn(marker)`
 * makes the next client message containing `marker` break the connection, either before the
 * server sees it, or once the server has answered it, the answer never reaching the client.
 */
export interface CuttingProxy {
  readonly port: number
  cutOn(marker: string, when: "before" | "after"): void
  /** Connections cut so far. */
  readonly cuts: () => number
  readonly close: () => Promise<void>
}

export const startCuttingProxy = async (target: {
  readonly host: string
  readonly port: number
}): Promise<CuttingProxy> => {
  let armed: { readonly marker: string; readonly when: "before" | "after" } | undefined
  let cuts = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = new (client.constructor as typeof Socket)()
    sockets.add(client)
    sockets.add(upstream)
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    const cut = () => {
      cuts += 1
      end()
    }
    /** Set once the client sent the marker to cut after: the server's answer is the signal to cut. */
    let cutOnAnswer = false
    upstream.connect(target.port, target.host)
    upstream.on("data", (chunk: Buffer) => (cutOnAnswer ? cut() : client.write(chunk)))
    client.on("data", (chunk: Buffer) => {
      const trigger = armed
      if (trigger !== undefined && chunk.includes(trigger.marker)) {
        armed = undefined
        if (trigger.when === "before") return cut()
        cutOnAnswer = true
      }
      upstream.write(chunk)
    })
    for (const socket of [client, upstream]) {
      socket.on("error", end)
      socket.on("close", () => {
        sockets.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    cutOn: (marker, when) => {
      armed = { marker, when }
    },
    cuts: () => cuts,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
