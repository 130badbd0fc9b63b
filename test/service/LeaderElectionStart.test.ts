import { startSimulatedCluster } from "@gpu-serials/kube-sim"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { ComponentStartError } from "../../src/component/ComponentStartError.ts"
import * as JsonLogger from "../../src/log/JsonLogger.ts"
import { factory as kubeExecFactory } from "../../src/receiver/kube/KubeExecFactory.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"
import { ComponentRegistry } from "../../src/service/ComponentRegistry.ts"
import { runGpuSerialsService } from "../../src/service/GpuSerialsService.ts"
import { capturingExporter, serviceConfig } from "./ServiceHarness.ts"

describe("gpu-serials service with leader election", () => {
  it("fails to start, naming the receiver, when the receiver type offers no elector", async () => {
    const cluster = await startSimulatedCluster({ nodes: 1, execLatency: 0 })
    try {
      const { elector: _elector, ...withoutElector } = kubeExecFactory
      const exit = await Effect.runPromiseExit(
        runGpuSerialsService({
          config: serviceConfig(cluster, ["--leader-election", "--lease-namespace", "gpu-serials"]),
          exporters: [capturingExporter([])],
          serviceVersion: "0.0.0-test",
          registry: ComponentRegistry.make({ ...builtinComponents, receivers: [withoutElector] }),
        }).pipe(Effect.provide(JsonLogger.layer({ level: "error", output: { write: () => undefined } }))),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit)
        ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
        : undefined
      expect(error).toBeInstanceOf(ComponentStartError)
      expect(error).toMatchObject({ component: "kube_exec" })
      expect((error as ComponentStartError).message).toMatch(/kube_exec offers no leader election/)
    } finally {
      await cluster.close()
    }
  })
})
