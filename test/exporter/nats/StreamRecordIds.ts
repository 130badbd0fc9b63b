import { jetstreamManager } from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"

/** The record id (`Nats-Msg-Id`) of every message in `stream`, in stream order. */
export const streamRecordIds = async (connection: NatsConnection, stream: string): Promise<Array<string>> => {
  const manager = await jetstreamManager(connection)
  const info = await manager.streams.info(stream)
  const ids: Array<string> = []
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const message = await manager.streams.getMessage(stream, { seq })
    ids.push(message?.header.get("Nats-Msg-Id") ?? "")
  }
  return ids
}
