import { describe, expect, it } from "vitest"
import { natsServerList } from "../../src/natsclient/NatsServerList.ts"

describe("natsServerList", () => {
  it("takes user and password out of the URLs, percent-decoded, whole when the password holds '@' or ':'", () => {
    expect(natsServerList("nats://gpu:p@ss:w%2Cd@n1:4222, tls://gpu:p@ss:w%2Cd@n2:4222?x=1")).toEqual({
      servers: ["nats://n1:4222", "tls://n2:4222?x=1"],
      credentials: [{ user: "gpu", password: "p@ss:w,d" }],
    })
  })

  it("reads a user part without a password as a token, in bare host:port servers too", () => {
    expect(natsServerList("s3cr3t-token@n1:4222,ws://n2:80")).toEqual({
      servers: ["n1:4222", "ws://n2:80"],
      credentials: [{ user: "s3cr3t-token" }],
    })
  })

  it("lists each distinct credential once and leaves servers without any as they are", () => {
    const list = natsServerList("nats://a:1@n1:4222,nats://a:1@n2:4222,nats://b@n3:4222,nats://n4:4222")
    expect(list.servers).toEqual(["nats://n1:4222", "nats://n2:4222", "nats://n3:4222", "nats://n4:4222"])
    expect(list.credentials).toEqual([{ user: "a", password: "1" }, { user: "b" }])
  })
})
