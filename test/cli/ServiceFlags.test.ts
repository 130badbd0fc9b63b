import { describe, expect, it } from "vitest"
import {
  CONFIG_ENV,
  configFilePath as configFilePathOf,
  parseFlags as parseFlagsOf,
  serviceFlags as serviceFlagsOf,
} from "../../src/cli/ServiceFlags.ts"
import { nodeLabelsEnabledSetting, workersSetting } from "../../src/receiver/kube/KubeExecConfig.ts"
import { allSettings, builtinComponents } from "../config/BuiltinSettings.ts"
import { configOf, problemsOf } from "../config/ResolveFixture.ts"

const cluster = { CLUSTER_NAME: "prod" }

const serviceFlags = serviceFlagsOf(builtinComponents)
const parseFlags = (argv: ReadonlyArray<string>) => parseFlagsOf(argv, serviceFlags)
const configFilePath = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  configFilePathOf(argv, env, serviceFlags)

describe("parseFlags", () => {
  it("reads --flag value and --flag=value", () => {
    expect(configOf({ env: cluster, argv: ["--workers", "4"] }).kubeExec.workers).toBe(4)
    expect(configOf({ env: cluster, argv: ["--workers=4"] }).kubeExec.workers).toBe(4)
    expect(configOf({ env: cluster, argv: ["--timeout", "1m30s", "--resync=-0"] }).kubeExec.timeoutMs).toBe(90_000)
  })

  it("reads switches as --labels, --no-labels and --labels=false, never taking the next argument", () => {
    expect(
      configOf({ env: { ...cluster, LABELS_ENABLED: "false" }, argv: ["--labels"] }).kubeExec.nodeLabels.enabled,
    ).toBe(true)
    expect(configOf({ env: cluster, argv: ["--no-labels"] }).kubeExec.nodeLabels.enabled).toBe(false)
    expect(configOf({ env: cluster, argv: ["--labels=false"] }).kubeExec.nodeLabels.enabled).toBe(false)
    expect(parseFlags(["--labels", "false"]).problems).toEqual([
      { key: "false", message: "unexpected argument (settings are given as --flag value)" },
    ])
    expect(parseFlags(["--no-labels"]).values.get(nodeLabelsEnabledSetting)).toEqual({
      flag: "--no-labels",
      text: "false",
    })
  })

  it("collects a repeated list flag", () => {
    expect(
      configOf({ env: cluster, argv: ["--exporter", "stdout", "--exporter=otlp,nats"] }).exporters.map((e) => e.id),
    ).toEqual(["stdout", "otlp", "nats"])
  })

  it("lets the last of a repeated flag win", () => {
    expect(parseFlags(["--workers", "1", "--workers", "2"]).values.get(workersSetting)?.text).toBe("2")
  })

  it("names unknown flags, missing values and stray arguments", () => {
    expect(problemsOf({ env: cluster, argv: ["--wokers", "4", "--timeout", "--qps"] })).toEqual([
      { key: "--qps", message: "flag needs a value" },
      { key: "--timeout", message: "flag needs a value" },
      { key: "--wokers", message: 'unknown flag (did you mean "--workers"?)' },
      { key: "4", message: "unexpected argument (settings are given as --flag value)" },
    ])
    expect(problemsOf({ env: cluster, argv: ["--no-labels=true", "-w", "--"] })).toEqual([
      { key: "--", message: "unexpected argument (settings are given as --flag value)" },
      { key: "--no-labels", message: "flag takes no value" },
      { key: "-w", message: "unexpected argument (settings are given as --flag value)" },
    ])
  })

  it("reports a flag's unreadable value under the flag", () => {
    expect(problemsOf({ env: cluster, argv: ["--labels=maybe", "--server-port", "99"] })).toEqual([
      { key: "--labels", message: 'node labels must be true or false, got "maybe"' },
      { key: "--server-port", message: "server port must be a valid integer between 1000 and 65535" },
    ])
  })
})

describe("the config file path", () => {
  it("comes from --config, else GPU_SERIALS_CONFIG", () => {
    expect(configFilePath(["--workers", "4", "--config", "/etc/gpu-serials.yaml"], {})).toBe("/etc/gpu-serials.yaml")
    expect(configFilePath(["--config=/a.yaml"], { [CONFIG_ENV]: "/b.yaml" })).toBe("/a.yaml")
    expect(configFilePath([], { [CONFIG_ENV]: "/b.yaml" })).toBe("/b.yaml")
    expect(configFilePath([], {})).toBeUndefined()
  })

  it("is a flag the resolution accepts", () => {
    expect(configOf({ env: cluster, argv: ["--config", "x.yaml"] }).clusterName).toBe("prod")
    expect(problemsOf({ env: cluster, argv: ["--config="] })).toEqual([
      { key: "--config", message: "flag needs a value" },
    ])
  })
})

describe("serviceFlags", () => {
  it("lists --config and every setting's flag, with --no- forms of switches", () => {
    const flags = serviceFlags.map((spec) => spec.flag)
    expect(flags[0]).toBe("--config")
    for (const setting of allSettings) if (setting.flag !== undefined) expect(flags).toContain(setting.flag)
    expect(flags).toContain("--no-labels")
    expect(flags).toContain("--no-leader-election")
    expect(new Set(flags).size).toBe(flags.length)
    for (const spec of serviceFlags) expect(spec.description).not.toBe("")
  })
})
