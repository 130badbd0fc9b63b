import { describe, expect, it } from "vitest"
import { FailingNodes } from "../../../src/receiver/kube/FailingNodes.ts"
import { type PodSelection, readingsVerdict } from "../../../src/receiver/kube/ReadingsVerdict.ts"

const selection: PodSelection = {
  namespace: "gpu-operator",
  labelSelector: "app=nvidia-device-plugin-daemonset",
  container: "nvidia-device-plugin-ctr",
  listed: true,
  pods: 3,
  readyPods: 3,
}

const nodesFailing = (kinds: ReadonlyArray<string | undefined>): FailingNodes => {
  const failing = new FailingNodes()
  kinds.forEach((kind, index) => {
    if (kind === undefined) failing.succeeded(`gpu-${index}`)
    else failing.failed(`gpu-${index}`, kind, 0)
  })
  return failing
}

describe("readings verdict", () => {
  it("is not ready when the listed selection is empty, naming both settings", () => {
    const verdict = readingsVerdict(new FailingNodes().summary(), { ...selection, pods: 0, readyPods: 0 })
    expect(verdict._tag).toBe("NoPods")
    expect(verdict).toMatchObject({ reason: expect.stringContaining('namespace "gpu-operator"') })
    expect(verdict).toMatchObject({ reason: expect.stringContaining("LABEL_SELECTOR") })
  })

  it("is ready before the pods are listed and before any reading", () => {
    expect(readingsVerdict(new FailingNodes().summary(), { ...selection, listed: false, pods: 0 })._tag).toBe("Ready")
    expect(readingsVerdict(new FailingNodes().summary(), selection)._tag).toBe("Ready")
  })

  it("names CONTAINER when every node fails with a container the pods do not have", () => {
    const verdict = readingsVerdict(nodesFailing(Array(3).fill("exec-container-not-found")).summary(), selection)
    expect(verdict).toMatchObject({ _tag: "Failing", kind: "exec-container-not-found", setting: "CONTAINER" })
    expect(verdict).toMatchObject({ reason: expect.stringContaining('"nvidia-device-plugin-ctr"') })
  })

  it("names RBAC when every node's exec is forbidden, even after earlier successes", () => {
    const failing = nodesFailing([undefined, undefined, undefined])
    for (let index = 0; index < 3; index++) failing.failed(`gpu-${index}`, "exec-forbidden", 1)
    expect(readingsVerdict(failing.summary(), selection)).toMatchObject({ _tag: "Failing", setting: "RBAC" })
  })

  it("waits until every ready pod's node has had a reading", () => {
    const verdict = readingsVerdict(nodesFailing(["exec-container-not-found"]).summary(), selection)
    expect(verdict._tag).toBe("Ready")
  })

  it("fails when no reading ever succeeded, whatever the kinds, and passes after one success", () => {
    const failing = nodesFailing(["driver-not-loaded", "driver-not-loaded", "exec-timeout"])
    const verdict = readingsVerdict(failing.summary(), selection)
    expect(verdict).toMatchObject({ _tag: "Failing", kind: "driver-not-loaded", setting: undefined })
    expect(verdict).toMatchObject({ reason: expect.stringContaining("driver-not-loaded 2, exec-timeout 1") })
    failing.succeeded("gpu-2")
    expect(readingsVerdict(failing.summary(), selection)._tag).toBe("Ready")
  })

  it("stays ready when some nodes fail with a node kind and others read well", () => {
    const failing = nodesFailing(["driver-not-loaded", undefined, "exec-forbidden"])
    expect(readingsVerdict(failing.summary(), selection)._tag).toBe("Ready")
  })
})
