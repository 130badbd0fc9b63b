import { createServer, type IncomingMessage, type Server } from "node:http"
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net"

/** An OTLP collector that takes every request and never answers, as one stuck behind a dead network. */
export interface HungCollector {
  readonly url: string
  readonly requests: () => number
  readonly close: () => Promise<void>
}

export const startHungCollector = async (): Promise<HungCollector> => {
  const held: Array<IncomingMessage> = []
  const server: Server = createServer((request) => {
    held.push(request)
    request.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => held.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A TCP server that accepts every connection and never sends a byte: a NATS or PostgreSQL server gone mute. */
export const startMuteServer = async (): Promise<HungCollector> => {
  const sockets: Array<Socket> = []
  const server = createTcpServer((socket) => {
    sockets.push(socket)
    socket.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `127.0.0.1:${port}`,
    requests: () => sockets.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
