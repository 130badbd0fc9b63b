import { Context, Effect, Layer, Schema } from "effect"
import type { ComponentFactory } from "../../component/Component.ts"
import { ComponentStartError } from "../../component/ComponentStartError.ts"
import { sectionValidator } from "../../component/ConfigSection.ts"
import type { KubeExecConfig } from "../../config/ServiceConfig.ts"
import { type Setting, valueProblem } from "../../config/Setting.ts"
import {
  burstSetting,
  containerSetting,
  kubeconfigSetting,
  labelSelectorSetting,
  namespaceSetting,
  nodeLabelPrefixSetting,
  nodeLabelsEnabledSetting,
  nvidiaSmiMaxOutputSetting,
  nvidiaSmiModeSetting,
  qpsSetting,
  resyncSetting,
  timeoutSetting,
  workersSetting,
} from "../../config/Settings.ts"
import type { ServiceMetrics } from "../../telemetry/ServiceMetrics.ts"
import { defaultExecHandshakeTimeoutMs, defaultRequestTimeoutMs, KubeApi } from "./KubeApi.ts"
import { defaultTuning, type KubeExecReceiver, type KubeExecTuning, make } from "./KubeExecReceiver.ts"

/** A field checked by its setting's own rule and range, with the message the config loader gives. */
const checkedBy = <S extends Schema.Top & { readonly Type: T }, T>(schema: S, setting: Setting<T>) =>
  schema.check(Schema.makeFilter((value: T) => valueProblem(setting, value)))

const KubeExecSection = Schema.Struct({
  namespace: checkedBy(Schema.String, namespaceSetting),
  labelSelector: checkedBy(Schema.String, labelSelectorSetting),
  container: checkedBy(Schema.String, containerSetting),
  workers: checkedBy(Schema.Int, workersSetting),
  timeoutMs: checkedBy(Schema.Finite, timeoutSetting),
  resyncMs: checkedBy(Schema.Finite, resyncSetting),
  qps: checkedBy(Schema.Finite, qpsSetting),
  burst: checkedBy(Schema.Int, burstSetting),
  kubeconfig: Schema.String,
  nvidiaSmi: Schema.Struct({
    mode: Schema.Literals(["auto", "xml", "csv"]),
    maxOutputBytes: checkedBy(Schema.Int, nvidiaSmiMaxOutputSetting),
  }),
  nodeLabels: Schema.Struct({
    enabled: Schema.Boolean,
    prefix: checkedBy(Schema.String, nodeLabelPrefixSetting),
  }),
})

const defaultOf = <T>(setting: Setting<T>): T => {
  if (setting.default === undefined) {
    throw new Error(`setting ${setting.key} has no default`)
  }
  return setting.default
}

/** The receiver's config when nothing is set: the defaults of the settings table. */
export const defaultKubeExecConfig: KubeExecConfig = {
  namespace: defaultOf(namespaceSetting),
  labelSelector: defaultOf(labelSelectorSetting),
  container: defaultOf(containerSetting),
  workers: defaultOf(workersSetting),
  timeoutMs: defaultOf(timeoutSetting),
  resyncMs: defaultOf(resyncSetting),
  qps: defaultOf(qpsSetting),
  burst: defaultOf(burstSetting),
  kubeconfig: defaultOf(kubeconfigSetting),
  nvidiaSmi: { mode: defaultOf(nvidiaSmiModeSetting), maxOutputBytes: defaultOf(nvidiaSmiMaxOutputSetting) },
  nodeLabels: { enabled: defaultOf(nodeLabelsEnabledSetting), prefix: defaultOf(nodeLabelPrefixSetting) },
}

const validateSection = sectionValidator<KubeExecConfig>(KubeExecSection)

export type KubeExecFactory = ComponentFactory<"receiver", KubeExecConfig, KubeExecReceiver, ServiceMetrics>

/**
 * The `kube_exec` receiver factory. Its config is the `KubeExecConfig` the service resolved from the
 * file, the environment and the flags; `validate` checks that typed object again with the same rules.
 */
export const makeFactory = (tuning: KubeExecTuning = defaultTuning): KubeExecFactory => ({
  kind: "receiver",
  type: "kube_exec",
  defaultConfig: defaultKubeExecConfig,
  validate: (section) => validateSection(section ?? defaultKubeExecConfig),
  create: (config, settings) =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        KubeApi.layer({
          kubeconfig: config.kubeconfig,
          qps: config.qps,
          burst: config.burst,
          requestTimeoutMs: defaultRequestTimeoutMs,
          execHandshakeTimeoutMs: defaultExecHandshakeTimeoutMs,
        }),
      ).pipe(Effect.mapError((error) => new ComponentStartError({ component: settings.id, message: error.message })))
      const api = Context.get(context, KubeApi)
      yield* Effect.logInfo("kube_exec receiver starting").pipe(
        Effect.annotateLogs({
          receiver: settings.id,
          kubeconfig: api.origin,
          namespace: config.namespace,
          labelSelector: config.labelSelector,
          workers: config.workers,
        }),
      )
      return yield* make(config, tuning).pipe(Effect.provideService(KubeApi, api))
    }),
})

export const factory: KubeExecFactory = makeFactory()
