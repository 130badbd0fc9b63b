import { createUser } from "@nats-io/nkeys"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as NatsExporter from "../../src/exporter/nats/NatsExporter.ts"
import { nkeySeedProblem } from "../../src/natsclient/NkeySeed.ts"

const realSeed = (): string => new TextDecoder().decode(createUser().getSeed())

describe("the nkey seed check", () => {
  it("accepts the user seeds nkeys makes", () => {
    for (let seed = 0; seed < 50; seed++) expect(nkeySeedProblem(realSeed())).toBeUndefined()
  })

  it("refuses a seed with one character changed or lost, not base32, or not a user seed", () => {
    const seed = realSeed()
    const changed = `${seed.slice(0, 20)}${seed[20] === "A" ? "B" : "A"}${seed.slice(21)}`
    expect(nkeySeedProblem(changed)).toBe("NATS nkey seed has a wrong checksum (a character was changed or lost)")
    expect(nkeySeedProblem(`${seed.slice(0, 30)}${seed.slice(31)}`)).toMatch(/wrong checksum/)
    expect(nkeySeedProblem(`${seed.slice(0, 10)}1${seed.slice(11)}`)).toBe("NATS nkey seed is not base32 (A-Z and 2-7)")
    expect(nkeySeedProblem(`SA${seed.slice(2)}`)).toBe("NATS nkey seed must be a user seed (starting with SU)")
  })

  it("is the nats exporter's check of nkeySeed, named by its key, so config validate refuses a broken seed", () => {
    const seed = realSeed()
    const broken = NatsExporter.factory.validate({
      nkeySeed: `${seed.slice(0, 40)}${seed[40] === "Q" ? "R" : "Q"}${seed.slice(41)}`,
    })
    expect(Result.isFailure(broken) && broken.failure).toEqual([
      { key: "nkeySeed", message: "NATS nkey seed has a wrong checksum (a character was changed or lost)" },
    ])
    expect(Result.isSuccess(NatsExporter.factory.validate({ nkeySeed: seed }))).toBe(true)
  })
})
