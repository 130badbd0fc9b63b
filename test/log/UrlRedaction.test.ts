import { describe, expect, it } from "vitest"
import { REDACTED, redactUrl, redactUrlList, redactUrlsIn } from "../../src/log/UrlRedaction.ts"

describe("redactUrl", () => {
  it.each([
    ["nats://user:pw@nats:4222", `nats://${REDACTED}@nats:4222`],
    ["tls://token@nats:4222", `tls://${REDACTED}@nats:4222`],
    ["wss://u:p@nats.example.com/ws", `wss://${REDACTED}@nats.example.com/ws`],
    ["user:pw@nats:4222", `${REDACTED}@nats:4222`],
    ["http://user:p@ss:w0rd@collector:4318/v1/logs", `http://${REDACTED}@collector:4318/v1/logs`],
    ["http://user:p%40ss%3A@collector:4318", `http://${REDACTED}@collector:4318`],
    ["http://collector:4318/?token=abc&tenant=t1", `http://collector:4318/?token=${REDACTED}&tenant=${REDACTED}`],
    ["http://collector:4318/v1/logs?abc", `http://collector:4318/v1/logs?${REDACTED}`],
    ["https://u:p@collector/otlp?k=v#frag", `https://${REDACTED}@collector/otlp?k=${REDACTED}#${REDACTED}`],
  ])("%s → %s", (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted)
  })

  it("keeps a URL without secrets as it is", () => {
    for (const url of ["nats://127.0.0.1:4222", "127.0.0.1:4222", "http://collector:4318/prefix/", "http://h/?"]) {
      expect(redactUrl(url)).toBe(url)
    }
  })
})

describe("redactUrlList", () => {
  it("redacts every server of a NATS list, schemes and bare host:port alike", () => {
    expect(redactUrlList("nats://a:pw-1@n1:4222,tls://tok-2@n2:4222,ws://n3:80,u:pw-3@n4:4222,n5:4222")).toBe(
      `nats://${REDACTED}@n1:4222,tls://${REDACTED}@n2:4222,ws://n3:80,${REDACTED}@n4:4222,n5:4222`,
    )
  })
})

describe("redactUrlsIn", () => {
  it("changes nothing in text it already redacted", () => {
    const once = redactUrlsIn("at nats://u:p@n1:4222?q=x&r,https://h/?a=1#f and wss://t@n2/ws?k=v")
    expect(redactUrlsIn(once)).toBe(once)
    expect(redactUrlsIn(redactUrl("http://u:p@h:1/x?token=t"))).toBe(`http://${REDACTED}@h:1/x?token=${REDACTED}`)
  })

  it("redacts the URLs a client library quotes in its messages and leaves the rest of the text", () => {
    const message =
      "Request cannot be constructed from a URL that includes credentials: http://otlp:s3cret@collector:4318/v1/logs?token=t0ken"
    const redacted = redactUrlsIn(message)
    expect(redacted).toBe(
      `Request cannot be constructed from a URL that includes credentials: http://${REDACTED}@collector:4318/v1/logs?token=${REDACTED}`,
    )
  })

  it("redacts a server list quoted in a sentence, up to the next blank or quote", () => {
    expect(redactUrlsIn(`cannot connect to "nats://u:pw@n1:4222,tls://tok@n2:4222" (refused)`)).toBe(
      `cannot connect to "nats://${REDACTED}@n1:4222,tls://${REDACTED}@n2:4222" (refused)`,
    )
  })

  it("leaves text without URLs as it is", () => {
    expect(redactUrlsIn("connect ECONNREFUSED 127.0.0.1:4318 for gpu@node")).toBe(
      "connect ECONNREFUSED 127.0.0.1:4318 for gpu@node",
    )
  })
})
