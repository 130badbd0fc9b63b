import type { JsonObject } from "../api/Json.ts"
import type { DevicePluginPodSpec } from "./DevicePluginPod.ts"
import { completedInitContainerStatus, podConditions, podLifecycleOf } from "./PodLifecycle.ts"

/**
 * The kubelet-plugin DaemonSet of NVIDIA's DRA driver as Helm chart `nvidia-dra-driver-gpu` v25.12.0
 * renders it with default values (`templates/kubeletplugin.yaml`, `_helpers.tpl`), installed as release
 * `nvidia-dra-driver-gpu` in the namespace of the same name.
 */
export const draDriverChart = {
  namespace: "nvidia-dra-driver-gpu",
  daemonSetName: "nvidia-dra-driver-gpu-kubelet-plugin",
  /** The pod labels of the chart: template labels and the component selector label. */
  labels: {
    "app.kubernetes.io/name": "nvidia-dra-driver-gpu",
    "app.kubernetes.io/instance": "nvidia-dra-driver-gpu",
    "nvidia-dra-driver-gpu-component": "kubelet-plugin",
  },
  /** `spec.selector.matchLabels` of the DaemonSet. */
  selector: "nvidia-dra-driver-gpu-component=kubelet-plugin",
  /** The GPU plugin's container; `compute-domains` runs before it in the pod. */
  gpuContainer: "gpus",
  image: "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0",
  serviceAccount: "nvidia-dra-driver-gpu-service-account-kubeletplugin",
} as const

const imageDigest = "sha256:4c5d1e7a8b9f0a3c2d6e4f1b7a9c8d0e3f5a2b4c6d8e0f1a3b5c7d9e2f4a6b8c"

const containerNames = ["compute-domains", draDriverChart.gpuContainer] as const

/** Environment of both plugin containers (chart defaults; `NODE_NAME` and `NAMESPACE` from the downward API). */
const pluginEnv = (container: string): JsonObject[] => [
  { name: "LOG_VERBOSITY", value: "4" },
  { name: "MASK_NVIDIA_DRIVER_PARAMS", value: "" },
  { name: "NVIDIA_DRIVER_ROOT", value: "/" },
  { name: "NVIDIA_VISIBLE_DEVICES", value: "void" },
  { name: "CDI_ROOT", value: "/var/run/cdi" },
  { name: "NVIDIA_MIG_CONFIG_DEVICES", value: "all" },
  { name: "NODE_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "spec.nodeName" } } },
  { name: "NAMESPACE", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } } },
  { name: "IMAGE_NAME", value: draDriverChart.image },
  { name: "KUBELET_REGISTRAR_DIRECTORY_PATH", value: "/var/lib/kubelet/plugins_registry" },
  { name: "KUBELET_PLUGINS_DIRECTORY_PATH", value: "/var/lib/kubelet/plugins" },
  { name: "HEALTHCHECK_PORT", value: container === draDriverChart.gpuContainer ? "51516" : "51515" },
]

const pluginMounts = (container: string): JsonObject[] => [
  { name: "plugins-registry", mountPath: "/var/lib/kubelet/plugins_registry" },
  { name: "plugins", mountPath: "/var/lib/kubelet/plugins", mountPropagation: "Bidirectional" },
  { name: "cdi", mountPath: "/var/run/cdi" },
  {
    name: "driver-root",
    mountPath: "/driver-root",
    mountPropagation: "HostToContainer",
    ...(container === "compute-domains" ? { readOnly: true } : {}),
  },
]

/** The pod of the DRA driver's kubelet-plugin DaemonSet on one node, in the state its stage implies. */
export const draKubeletPluginPod = (spec: DevicePluginPodSpec): JsonObject => {
  const life = podLifecycleOf(spec)
  const { created, started, running, ready } = life
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: spec.name,
      generateName: `${spec.daemonSetName}-`,
      namespace: spec.namespace,
      labels: { ...spec.labels },
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
    },
    spec: {
      nodeName: spec.nodeName,
      serviceAccountName: draDriverChart.serviceAccount,
      serviceAccount: draDriverChart.serviceAccount,
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
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
      ],
      initContainers: [
        {
          name: "init-container",
          image: draDriverChart.image,
          command: ["bash", "/usr/bin/kubelet-plugin-prestart.sh"],
          env: [
            { name: "NVIDIA_DRIVER_ROOT", value: "/" },
            { name: "NVIDIA_VISIBLE_DEVICES", value: "void" },
            { name: "KUBELET_REGISTRAR_DIRECTORY_PATH", value: "/var/lib/kubelet/plugins_registry" },
            { name: "KUBELET_PLUGINS_DIRECTORY_PATH", value: "/var/lib/kubelet/plugins" },
          ],
          imagePullPolicy: "IfNotPresent",
          resources: {},
          securityContext: { privileged: true },
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          volumeMounts: [{ name: "driver-root-parent", mountPath: "/driver-root-parent" }],
        },
      ],
      containers: containerNames.map((name) => ({
        name,
        image: draDriverChart.image,
        command: ["bash", "-c"],
        args: [
          name === draDriverChart.gpuContainer
            ? "exec gpu-kubelet-plugin -v $(LOG_VERBOSITY)"
            : "exec compute-domain-kubelet-plugin -v $(LOG_VERBOSITY)",
        ],
        env: pluginEnv(name),
        imagePullPolicy: "IfNotPresent",
        resources: {},
        securityContext: { privileged: true },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        volumeMounts: pluginMounts(name),
      })),
      volumes: [
        { name: "plugins-registry", hostPath: { path: "/var/lib/kubelet/plugins_registry", type: "" } },
        { name: "plugins", hostPath: { path: "/var/lib/kubelet/plugins", type: "" } },
        { name: "cdi", hostPath: { path: "/var/run/cdi", type: "" } },
        { name: "driver-root-parent", hostPath: { path: "/", type: "DirectoryOrCreate" } },
        { name: "driver-root", hostPath: { path: "/", type: "DirectoryOrCreate" } },
      ],
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
          name: "init-container",
          image: draDriverChart.image,
          imageID: `nvcr.io/nvidia/k8s-dra-driver-gpu@${imageDigest}`,
        }),
      ],
      containerStatuses: containerNames.map((name, index) => ({
        name,
        image: draDriverChart.image,
        imageID: `nvcr.io/nvidia/k8s-dra-driver-gpu@${imageDigest}`,
        ...(running ? { containerID: `containerd://${spec.containerIds[index] ?? ""}` } : {}),
        ready,
        restartCount: 0,
        started: running,
        state: running ? { running: { startedAt: started ?? created } } : { waiting: { reason: "PodInitializing" } },
        lastState: {},
      })),
      qosClass: "BestEffort",
    },
  }
}
