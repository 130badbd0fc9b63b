import type { JsonObject } from "../api/Json.ts"
import { completedInitContainerStatus, podConditions, podLifecycleOf } from "./PodLifecycle.ts"

export const devicePluginImage = "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
const devicePluginDigest = "sha256:2ecf0b1bd8da6b1cde0b3e1ed2ad3d5fa1f2e7f0d85e1d4b0f4bbd8e6b6a4c7e"
const validatorImage = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0"
const validatorDigest = "sha256:7f3a3c3b0c2b1e8d0d6a9f5b4e2c1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e"

/** Lifecycle stage of a device-plugin pod as the kubelet reports it. */
export type PodStage = "pending" | "starting" | "ready" | "terminating"

export interface DevicePluginPodSpec {
  readonly name: string
  readonly namespace: string
  readonly nodeName: string
  readonly hostIp: string
  readonly podIp: string
  readonly daemonSetName: string
  readonly daemonSetUid: string
  readonly labels: Readonly<Record<string, string>>
  readonly container: string
  readonly containerIds: ReadonlyArray<string>
  readonly createdAt: Date
  readonly startedAt: Date | undefined
  readonly readyAt: Date | undefined
  readonly stage: PodStage
}

/** The pod of the NVIDIA device-plugin DaemonSet on one node, in the state its stage implies. */
export const devicePluginPod = (spec: DevicePluginPodSpec): JsonObject => {
  const life = podLifecycleOf(spec)
  const { created, started, running, ready } = life
  const containerNames = [spec.container, "config-manager"]
  const containerStatuses = containerNames.map((name, index) => ({
    name,
    image: devicePluginImage,
    imageID: `nvcr.io/nvidia/k8s-device-plugin@${devicePluginDigest}`,
    ...(running ? { containerID: `containerd://${spec.containerIds[index] ?? ""}` } : {}),
    ready: ready,
    restartCount: 0,
    started: running,
    state: running ? { running: { startedAt: started ?? created } } : { waiting: { reason: "ContainerCreating" } },
    lastState: {},
  }))
  const metadata: JsonObject = {
    name: spec.name,
    generateName: `${spec.daemonSetName}-`,
    namespace: spec.namespace,
    labels: { ...spec.labels },
    annotations: { "kubectl.kubernetes.io/default-container": spec.container },
    ownerReferences: [
      {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        name: spec.daemonSetName,
        uid: spec.daemonSetUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      nodeName: spec.nodeName,
      serviceAccountName: "nvidia-device-plugin",
      serviceAccount: "nvidia-device-plugin",
      priorityClassName: "system-node-critical",
      priority: 2000001000,
      restartPolicy: "Always",
      schedulerName: "default-scheduler",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [spec.nodeName] }] }],
          },
        },
      },
      tolerations: [
        { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
      ],
      initContainers: [
        {
          name: "toolkit-validation",
          image: validatorImage,
          command: ["sh", "-c"],
          args: [
            "until [ -f /run/nvidia/validations/toolkit-ready ]; do echo waiting for nvidia container stack to be setup; sleep 5; done",
          ],
          imagePullPolicy: "IfNotPresent",
          resources: {},
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
        },
      ],
      containers: containerNames.map((name) => ({
        name,
        image: devicePluginImage,
        command: name === spec.container ? ["nvidia-device-plugin"] : ["config-manager"],
        env: [
          { name: "NVIDIA_VISIBLE_DEVICES", value: "all" },
          { name: "NVIDIA_DRIVER_CAPABILITIES", value: "compute,utility" },
          { name: "NODE_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "spec.nodeName" } } },
        ],
        imagePullPolicy: "IfNotPresent",
        resources: {},
        securityContext: name === spec.container ? { privileged: true } : {},
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        volumeMounts: [{ name: "device-plugin", mountPath: "/var/lib/kubelet/device-plugins" }],
      })),
      volumes: [{ name: "device-plugin", hostPath: { path: "/var/lib/kubelet/device-plugins", type: "" } }],
    },
    status: {
      phase: running ? "Running" : "Pending",
      conditions: podConditions(life, containerNames),
      hostIP: spec.hostIp,
      hostIPs: [{ ip: spec.hostIp }],
      ...(running ? { podIP: spec.podIp, podIPs: [{ ip: spec.podIp }] } : {}),
      startTime: created,
      initContainerStatuses: [
        completedInitContainerStatus(life, {
          name: "toolkit-validation",
          image: validatorImage,
          imageID: `nvcr.io/nvidia/cloud-native/gpu-operator-validator@${validatorDigest}`,
        }),
      ],
      containerStatuses,
      qosClass: "BestEffort",
    },
  }
}
