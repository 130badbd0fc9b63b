import { describe, expect, it } from "vitest"
import { execPath } from "../../../src/kubeclient/remotecommand/ExecSession.ts"

describe("execPath", () => {
  const argv = ["nvidia-smi", "--query-gpu=uuid,serial", "--format=csv,noheader"]

  it("asks for stdout and stderr without stdin or a TTY, one command per argument, then the container", () => {
    expect(execPath({ namespace: "gpu-operator", pod: "plugin-a", container: "nvidia-device-plugin", argv })).toBe(
      "/api/v1/namespaces/gpu-operator/pods/plugin-a/exec?stdout=true&stderr=true&stdin=false&tty=false" +
        "&command=nvidia-smi&command=--query-gpu%3Duuid%2Cserial&command=--format%3Dcsv%2Cnoheader" +
        "&container=nvidia-device-plugin",
    )
  })

  it("names each call's own pod and container when the same argv runs in many", () => {
    const paths = [
      execPath({ namespace: "gpu-operator", pod: "plugin-a", container: "nvidia-device-plugin", argv }),
      execPath({ namespace: "nvidia-dra", pod: "plugin-b", container: "gpus", argv }),
      execPath({ namespace: "gpu-operator", pod: "plugin-c", container: "nvidia-device-plugin", argv }),
    ]
    expect(
      paths.map((path) => /\/namespaces\/([^/]+)\/pods\/([^/]+)\/.*container=(.*)$/.exec(path)?.slice(1)),
    ).toStrictEqual([
      ["gpu-operator", "plugin-a", "nvidia-device-plugin"],
      ["nvidia-dra", "plugin-b", "gpus"],
      ["gpu-operator", "plugin-c", "nvidia-device-plugin"],
    ])
  })
})
