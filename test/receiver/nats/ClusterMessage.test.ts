import { describe, expect, it } from "vitest"
import { heartbeatSchema } from "../../../src/domain/ClusterHeartbeat.ts"
import { recordSchema } from "../../../src/domain/GpuRecord.ts"
import { readClusterMessage } from "../../../src/receiver/nats/ClusterMessage.ts"
import { sourceDomain } from "../../../src/receiver/nats/HubSources.ts"

const record = {
  schema: recordSchema,
  event: "added",
  id: "0123456789abcdef0123456789abcdef",
  cluster: "east",
  node: "e-1",
  machine: "i-0abc",
  source: "gpu-operator/nvidia-device-plugin-x",
  chassis: "",
  gpu: "1650123456789",
  time: "2026-03-01T00:00:00.000Z",
  uuid: "GPU-1111",
  index: 0,
  serialShared: false,
}

describe("a message of the hub stream", () => {
  it("is a cluster's record when it is a gpu-serials/v1 record with its identity and time", () => {
    expect(readClusterMessage(JSON.stringify(record))).toEqual({ _tag: "Record", record })
  })

  it("is a heartbeat with its cluster and time", () => {
    const body = JSON.stringify({ schema: heartbeatSchema, cluster: "west", time: "2026-03-01T00:00:30.000Z" })
    expect(readClusterMessage(body)).toEqual({
      _tag: "Heartbeat",
      cluster: "west",
      sentAt: new Date("2026-03-01T00:00:30.000Z"),
    })
  })

  it("is unreadable, with a short reason and none of its content, otherwise", () => {
    expect(readClusterMessage("{not json")).toEqual({ _tag: "Unreadable", reason: "not JSON" })
    expect(readClusterMessage("[1]")).toEqual({ _tag: "Unreadable", reason: "neither a record nor a heartbeat" })
    expect(readClusterMessage(JSON.stringify({ ...record, uuid: 7 }))).toEqual({
      _tag: "Unreadable",
      reason: "a record without uuid",
    })
    expect(readClusterMessage(JSON.stringify({ ...record, time: "yesterday" }))).toEqual({
      _tag: "Unreadable",
      reason: "a record without a valid time",
    })
    expect(readClusterMessage(JSON.stringify({ schema: heartbeatSchema, cluster: "west" }))).toEqual({
      _tag: "Unreadable",
      reason: "a heartbeat without cluster or time",
    })
  })
})

describe("a source of the hub stream", () => {
  it("reads from the JetStream domain its API prefix names", () => {
    expect(sourceDomain({ name: "GPU_SERIALS", external: { api: "$JS.east.API", deliver: "" } })).toBe("east")
    expect(sourceDomain({ name: "GPU_SERIALS" })).toBeUndefined()
  })
})
