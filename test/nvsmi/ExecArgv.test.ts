import { describe, expect, it } from "vitest"
import { csvQueryArgvFor, xmlQueryArgv } from "../../src/nvsmi/Command.ts"
import { execArgvFor, plainNvidiaSmi } from "../../src/nvsmi/ExecArgv.ts"

describe("execArgvFor", () => {
  it("runs nvidia-smi on PATH as before", () => {
    expect(execArgvFor(plainNvidiaSmi, xmlQueryArgv)).toEqual(["nvidia-smi", "-q", "-x"])
  })

  it("runs the configured path as argv[0]", () => {
    expect(execArgvFor({ path: "/driver-root/usr/bin/nvidia-smi", mlLibrary: "" }, xmlQueryArgv)).toEqual([
      "/driver-root/usr/bin/nvidia-smi",
      "-q",
      "-x",
    ])
  })

  it("preloads the NVML library through env, each CSV argument one argv entry", () => {
    const argv = execArgvFor(
      {
        path: "/driver-root/usr/bin/nvidia-smi",
        mlLibrary: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      },
      csvQueryArgvFor(["index", "uuid", "serial"]),
    )
    expect(argv).toEqual([
      "env",
      "LD_PRELOAD=/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      "/driver-root/usr/bin/nvidia-smi",
      "--query-gpu=index,uuid,serial",
      "--format=csv,noheader",
    ])
  })
})
