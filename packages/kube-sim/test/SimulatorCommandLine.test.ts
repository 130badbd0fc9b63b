import { describe, expect, it } from "vitest"
import { CommandLineError, parseSimulatorCommand } from "../src/SimulatorCommandLine.ts"

describe("the simulator's command line", () => {
  it("runs the DRA driver with --dra, and takes the dra-mismatch fault's probability", () => {
    expect(parseSimulatorCommand(["--dra", "--nodes", "20", "--fault-dra-mismatch", "0.05"])).toEqual({
      help: false,
      options: { dra: true, nodes: 20, faults: { draMismatch: 0.05 } },
    })
    expect(parseSimulatorCommand(["--nodes", "2"])).toEqual({ help: false, options: { nodes: 2 } })
    expect(() => parseSimulatorCommand(["--fault-dra-mismatch", "2"])).toThrow(CommandLineError)
  })

  it("serves plain HTTP only with --insecure-http", () => {
    expect(parseSimulatorCommand(["--insecure-http"])).toEqual({ help: false, options: { insecureHttp: true } })
    expect(parseSimulatorCommand([])).toEqual({ help: false, options: {} })
  })

  it("turns flags into cluster options", () => {
    expect(
      parseSimulatorCommand([
        "--nodes",
        "2000",
        "--exec-latency",
        "200ms",
        "--port",
        "0",
        "--kubeconfig",
        "/tmp/x",
        "--model-mix",
        "h100-hgx=3,t4=1",
        "--fault-throttle",
        "0.01",
        "--churn-pod-restarts",
        "30",
        "--bookmark-interval",
        "5s",
        "--ledger",
        "/tmp/ledger.jsonl",
        "--fault-driver-failures",
        "2",
        "--fault-driver-failure-time",
        "30s",
        "--fault-health",
        "0.2",
        "--fault-health-stage-time",
        "10s",
      ]),
    ).toEqual({
      help: false,
      options: {
        nodes: 2000,
        port: 0,
        kubeconfigPath: "/tmp/x",
        execLatency: { kind: "fixed", ms: 200 },
        modelMix: { "h100-hgx": 3, t4: 1 },
        faults: {
          throttle: 0.01,
          driverFailuresPerMinute: 2,
          driverFailureSeconds: 30,
          healthFaultsPerGpuMinute: 0.2,
          healthStageSeconds: 10,
        },
        churn: { podRestartsPerMinute: 30 },
        bookmarkIntervalMs: 5000,
        ledgerPath: "/tmp/ledger.jsonl",
      },
    })
  })

  it.each([
    [["--nodes", "-1"], /--nodes/],
    [["--fault-exec-hang", "2"], /probability/],
    [["--fault-health", "1.5"], /--fault-health/],
    [["--model-mix", "h200=1"], /unknown model "h200"/],
    [["--exec-latency", "fast"], /--exec-latency/],
    [["--verbose"], /Unknown option/],
  ])("rejects %j", (argv, message) => {
    expect(() => parseSimulatorCommand(argv)).toThrow(CommandLineError)
    expect(() => parseSimulatorCommand(argv)).toThrow(message)
  })
})
