import * as Effect from "effect/Effect"
import type { ResourceSliceVersion } from "../../../kubeclient/resource/ResourceSlice.ts"
import type { KubeApi } from "../../../kubeclient/rest/KubeApi.ts"
import type { KubeApiError } from "../../../kubeclient/rest/KubeApiError.ts"
import type { DiscoveryMode, PodTarget } from "../KubeExecConfig.ts"
import { nvidiaGpuDriverSelector } from "./DraDevices.ts"
import { discoveryRetry, servedSliceVersion } from "./DraSlices.ts"

/** The mode `DISCOVERY=auto` picked, and why, in the words of its log line. */
export interface DiscoveryDecision {
  readonly mode: DiscoveryMode
  readonly reason: string
  /** The version of `resource.k8s.io` ResourceSlices are read in, when the server serves one. */
  readonly sliceVersion: ResourceSliceVersion | undefined
}

/** What `auto` saw: whether the API serves slices, whether NVIDIA's driver wrote any, whether device-plugin pods exist. */
export interface DiscoveryFacts {
  readonly sliceVersion: ResourceSliceVersion | undefined
  readonly nvidiaSlices: boolean
  readonly devicePluginPods: boolean
}

/** dra when the API serves `resource.k8s.io`, slices of `gpu.nvidia.com` exist and no device-plugin pod matches. */
export const decideFromFacts = (facts: DiscoveryFacts, devicePlugin: PodTarget): DiscoveryDecision => {
  const pods = `pods matching "${devicePlugin.labelSelector}" in namespace "${devicePlugin.namespace}"`
  if (facts.sliceVersion === undefined) {
    return {
      mode: "device-plugin",
      reason: "the API server does not serve resource.k8s.io ResourceSlices",
      sliceVersion: undefined,
    }
  }
  if (!facts.nvidiaSlices) {
    return {
      mode: "device-plugin",
      reason: `no ResourceSlice of driver gpu.nvidia.com (resource.k8s.io/${facts.sliceVersion})`,
      sliceVersion: facts.sliceVersion,
    }
  }
  if (facts.devicePluginPods) {
    return {
      mode: "device-plugin",
      reason: `device-plugin ${pods} exist beside ResourceSlices of gpu.nvidia.com`,
      sliceVersion: facts.sliceVersion,
    }
  }
  return {
    mode: "dra",
    reason: `ResourceSlices of driver gpu.nvidia.com (resource.k8s.io/${facts.sliceVersion}) and no device-plugin ${pods}`,
    sliceVersion: facts.sliceVersion,
  }
}

/** Asks the API what `auto` needs: API discovery, one slice of the driver, one device-plugin pod; each call retried a few times. */
export const discoveryFacts = (
  api: KubeApi["Service"],
  devicePlugin: PodTarget,
): Effect.Effect<DiscoveryFacts, KubeApiError> =>
  Effect.gen(function* () {
    const sliceVersion = yield* servedSliceVersion(api).pipe(Effect.retry(discoveryRetry))
    const nvidiaSlices =
      sliceVersion === undefined
        ? false
        : (yield* api
            .listResourceSlices(sliceVersion, nvidiaGpuDriverSelector, { limit: 1 })
            .pipe(Effect.retry(discoveryRetry))).items.length > 0
    const devicePluginPods =
      (yield* api
        .listPods(devicePlugin.namespace, devicePlugin.labelSelector, { limit: 1 })
        .pipe(Effect.retry(discoveryRetry))).items.length > 0
    return { sliceVersion, nvidiaSlices, devicePluginPods }
  })
