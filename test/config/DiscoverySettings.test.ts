import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { FileMapping } from "../../src/config/ResolveSettings.ts"
import { configForMode, draDefaults } from "../../src/receiver/kube/KubeExecConfig.ts"
import { configOf, problemsOf, resolve } from "./ResolveFixture.ts"

const cluster = { CLUSTER_NAME: "prod" }

/** The `receivers.kube_exec` section as `config print` writes it. */
const printedReceiver = (env: Record<string, string>): FileMapping => {
  const resolved = resolve({ env: { ...cluster, ...env } })
  if (Result.isFailure(resolved)) throw new Error(resolved.failure.format())
  const receivers = resolved.success.file.receivers as FileMapping
  return receivers.kube_exec as FileMapping
}

describe("DISCOVERY", () => {
  it("defaults to device-plugin and today's pods, nvidia-smi on PATH without a preload", () => {
    const config = configOf({ env: cluster }).kubeExec
    expect(config.discovery).toBe("device-plugin")
    expect(config.namespace).toBe("gpu-operator")
    expect(config.nvidiaSmi.path).toBe("nvidia-smi")
    expect(config.nvidiaSmi.mlLibrary).toBe("")
  })

  it("dra reads the DRA driver's kubelet-plugin pods, nvidia-smi from the driver root with NVML preloaded", () => {
    const config = configOf({ env: { ...cluster, DISCOVERY: "dra" } }).kubeExec
    expect(config).toMatchObject({
      discovery: "dra",
      namespace: "nvidia-dra-driver-gpu",
      labelSelector: "nvidia-dra-driver-gpu-component=kubelet-plugin",
      container: "gpus",
      nvidiaSmi: {
        path: "/driver-root/usr/bin/nvidia-smi",
        mlLibrary: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      },
    })
  })

  it("keeps the values set explicitly in dra mode, from the flags, the environment or the file", () => {
    const config = configOf({
      argv: ["--discovery", "dra", "--namespace", "dra-driver-nvidia-gpu"],
      env: { ...cluster, LABEL_SELECTOR: "dra-driver-nvidia-gpu-component=kubelet-plugin" },
      file: [
        "cluster:",
        "  name: prod",
        "receivers:",
        "  kube_exec:",
        "    nvidiaMlLibrary: /driver-root/usr/lib64/libnvidia-ml.so.1",
      ].join("\n"),
    }).kubeExec
    expect(config.namespace).toBe("dra-driver-nvidia-gpu")
    expect(config.labelSelector).toBe("dra-driver-nvidia-gpu-component=kubelet-plugin")
    expect(config.container).toBe("gpus")
    expect(config.nvidiaSmi.mlLibrary).toBe("/driver-root/usr/lib64/libnvidia-ml.so.1")
    expect(config.targets.dra.namespace).toBe("dra-driver-nvidia-gpu")
    expect(config.targets["device-plugin"].namespace).toBe("dra-driver-nvidia-gpu")
  })

  it("auto starts from the device-plugin pods and holds dra's for when it picks dra", () => {
    const config = configOf({ env: { ...cluster, DISCOVERY: "auto", CONTAINER: "plugin" } }).kubeExec
    expect(config.namespace).toBe("gpu-operator")
    const dra = configForMode(config, "dra")
    expect(dra.discovery).toBe("dra")
    expect(dra.namespace).toBe(draDefaults.namespace)
    expect(dra.container).toBe("plugin")
    expect(dra.nvidiaSmi.path).toBe(draDefaults.nvidiaSmiPath)
    expect(configForMode(config, "device-plugin").nvidiaSmi.mlLibrary).toBe("")
  })

  it("config print shows the effective dra values", () => {
    expect(printedReceiver({ DISCOVERY: "dra" })).toMatchObject({
      discovery: "dra",
      namespace: "nvidia-dra-driver-gpu",
      container: "gpus",
      nvidiaSmiPath: "/driver-root/usr/bin/nvidia-smi",
      nvidiaMlLibrary: "/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    })
  })

  it("rejects an unknown mode, naming the key", () => {
    expect(problemsOf({ env: { ...cluster, DISCOVERY: "kubelet" } })).toEqual([
      { key: "DISCOVERY", message: 'discovery must be one of device-plugin, dra, auto, got "kubelet"' },
    ])
  })
})

describe("NVIDIA_SMI_PATH and NVIDIA_ML_LIBRARY", () => {
  it.each(["nvidia-smi", "/usr/bin/nvidia-smi", "/driver-root/bin/nvidia-smi"])("take %s", (path) => {
    expect(configOf({ env: { ...cluster, NVIDIA_SMI_PATH: path } }).kubeExec.nvidiaSmi.path).toBe(path)
  })

  it.each([
    ["bin/nvidia-smi", "nvidia-smi path must be an absolute path or a bare name"],
    ["./nvidia-smi", "nvidia-smi path must be an absolute path or a bare name"],
    ["nvidia-smi -q", "nvidia-smi path must not contain whitespace or NUL"],
    ["/usr/bin/", "nvidia-smi path must name a file"],
    ["", "nvidia-smi path must be specified"],
  ])("refuse the nvidia-smi path %j", (path, message) => {
    const problems = problemsOf({ env: { ...cluster, NVIDIA_SMI_PATH: path } })
    expect(problems).toHaveLength(1)
    expect(problems[0]?.key).toBe("NVIDIA_SMI_PATH")
    expect(problems[0]?.message).toContain(message)
  })

  it("refuses a relative library, naming the flag", () => {
    const problems = problemsOf({ argv: ["--nvidia-ml-library", "libnvidia-ml.so.1"], env: cluster })
    expect(problems.map((problem) => problem.key)).toEqual(["--nvidia-ml-library"])
  })

  it("an empty library in dra mode turns the preload off", () => {
    const config = configOf({ argv: ["--nvidia-ml-library="], env: { ...cluster, DISCOVERY: "dra" } }).kubeExec
    expect(config.nvidiaSmi.mlLibrary).toBe("")
  })
})
