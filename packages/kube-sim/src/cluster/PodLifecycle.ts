import type { JsonObject } from "../api/Json.ts"
import { timestampOf } from "../api/ResourceStore.ts"
import type { DevicePluginPodSpec } from "./DevicePluginPod.ts"

/** Where a DaemonSet pod is in its life, as its stage and times give it, in the API's timestamps. */
export interface PodLifecycle {
  readonly created: string
  readonly started: string | undefined
  readonly running: boolean
  readonly ready: boolean
  /** When the pod last turned ready or unready. */
  readonly readyTime: string
}

export const podLifecycleOf = (
  spec: Pick<DevicePluginPodSpec, "createdAt" | "startedAt" | "readyAt" | "stage">,
): PodLifecycle => {
  const created = timestampOf(spec.createdAt)
  const started = spec.startedAt === undefined ? undefined : timestampOf(spec.startedAt)
  return {
    created,
    started,
    running: spec.stage === "starting" || spec.stage === "ready" || spec.stage === "terminating",
    ready: spec.stage === "ready",
    readyTime: spec.readyAt === undefined ? (started ?? created) : timestampOf(spec.readyAt),
  }
}

/** The conditions the kubelet reports for a pod at this point of its life, as `status.conditions`. */
export const podConditions = (life: PodLifecycle, containerNames: ReadonlyArray<string>): Array<JsonObject> => {
  const { created, started, running, ready, readyTime } = life
  const unready = ready
    ? {}
    : { reason: "ContainersNotReady", message: `containers with unready status: [${containerNames.join(" ")}]` }
  return [
    {
      type: "PodReadyToStartContainers",
      status: running ? "True" : "False",
      lastProbeTime: null,
      lastTransitionTime: started ?? created,
    },
    {
      type: "Initialized",
      status: running ? "True" : "False",
      lastProbeTime: null,
      lastTransitionTime: started ?? created,
    },
    { type: "Ready", status: ready ? "True" : "False", lastProbeTime: null, lastTransitionTime: readyTime, ...unready },
    {
      type: "ContainersReady",
      status: ready ? "True" : "False",
      lastProbeTime: null,
      lastTransitionTime: readyTime,
      ...unready,
    },
    { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: created },
  ]
}

/** The status of an init container that ran to completion before the pod's containers started. */
export const completedInitContainerStatus = (
  life: PodLifecycle,
  container: { readonly name: string; readonly image: string; readonly imageID: string },
): JsonObject => ({
  ...container,
  ready: life.running,
  restartCount: 0,
  started: false,
  state: life.running
    ? {
        terminated: {
          exitCode: 0,
          reason: "Completed",
          startedAt: life.created,
          finishedAt: life.started ?? life.created,
        },
      }
    : { waiting: { reason: "PodInitializing" } },
  lastState: {},
})
