import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { exporterQueueSettingsOf } from "./ExporterQueueSettings.ts"
import { decodeExporterSection } from "./ExporterSection.ts"
import { natsServerList } from "./NatsServerList.ts"
import type { QueueSettings } from "./QueueSettings.ts"
import {
  natsCredsSetting,
  natsKvBucketSetting,
  natsNkeySeedSetting,
  natsPasswordSetting,
  natsQueueSettings,
  natsStreamCreateSetting,
  natsStreamDuplicateWindowSetting,
  natsStreamMaxAgeSetting,
  natsStreamMaxBytesSetting,
  natsStreamRetentionSetting,
  natsStreamSetting,
  natsSubjectPrefixSetting,
  natsTlsCaSetting,
  natsTlsCertSetting,
  natsTlsKeySetting,
  natsTokenSetting,
  natsUrlSetting,
  natsUserSetting,
} from "./Settings.ts"

/** How the exporter authenticates to NATS: at most one way, the settings' or the server URLs' credentials. */
export type NatsAuth =
  | { readonly kind: "none" }
  | { readonly kind: "creds"; readonly credsFile: string }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "userPassword"; readonly user: string; readonly password: string }
  | { readonly kind: "nkey"; readonly seed: string }

/** How the exporter treats its JetStream stream. */
export interface NatsStreamSettings {
  /** Whether the exporter creates a missing stream and updates an existing one; false: it must exist. */
  readonly create: boolean
  readonly duplicateWindowMs: number
  /** Applies to a stream the exporter creates; an existing stream's retention cannot change. */
  readonly retention: "limits" | "interest" | "workqueue"
  /** 0: messages are kept forever. */
  readonly maxAgeMs: number
  /** Beyond it the oldest messages are discarded; 0: no size limit. */
  readonly maxBytes: number
}

/** The `nats` exporter's section. */
export interface NatsExporterConfig {
  /** Servers, as nats.js takes them. */
  readonly servers: ReadonlyArray<string>
  /** Subjects are `<subjectPrefix>.<cluster>.<node>.<event>`. */
  readonly subjectPrefix: string
  /** JetStream stream; absent: core NATS publish. */
  readonly stream?: string
  readonly streamSettings: NatsStreamSettings
  readonly kvBucket: string
  readonly auth: NatsAuth
  readonly tls?: {
    readonly caFile?: string
    readonly certFile?: string
    readonly keyFile?: string
  }
  readonly queue: QueueSettings
}

/** Checks a `nats` section; problems carry keys relative to the section. */
export const decodeNatsExporterConfig = (
  section: unknown,
): Result.Result<NatsExporterConfig, ReadonlyArray<ConfigProblem>> =>
  Result.map(decodeExporterSection("nats", section), (values) => {
    const creds = values.get(natsCredsSetting)
    const token = values.get(natsTokenSetting)
    const user = values.get(natsUserSetting)
    const password = values.get(natsPasswordSetting)
    const seed = values.get(natsNkeySeedSetting)
    const serverList = natsServerList(values.require(natsUrlSetting))
    const [fromUrl] = serverList.credentials
    const auth: NatsAuth =
      creds !== undefined
        ? { kind: "creds", credsFile: creds }
        : token !== undefined
          ? { kind: "token", token }
          : user !== undefined && password !== undefined
            ? { kind: "userPassword", user, password }
            : seed !== undefined
              ? { kind: "nkey", seed }
              : fromUrl === undefined
                ? { kind: "none" }
                : fromUrl.password === undefined
                  ? { kind: "token", token: fromUrl.user }
                  : { kind: "userPassword", user: fromUrl.user, password: fromUrl.password }
    const stream = values.get(natsStreamSetting)
    const caFile = values.get(natsTlsCaSetting)
    const certFile = values.get(natsTlsCertSetting)
    const keyFile = values.get(natsTlsKeySetting)
    const tls = {
      ...(caFile === undefined ? {} : { caFile }),
      ...(certFile === undefined ? {} : { certFile }),
      ...(keyFile === undefined ? {} : { keyFile }),
    }
    return {
      servers: serverList.servers,
      subjectPrefix: values.require(natsSubjectPrefixSetting),
      ...(stream === undefined ? {} : { stream }),
      streamSettings: {
        create: values.require(natsStreamCreateSetting),
        duplicateWindowMs: values.require(natsStreamDuplicateWindowSetting),
        retention: values.require(natsStreamRetentionSetting),
        maxAgeMs: values.require(natsStreamMaxAgeSetting),
        maxBytes: values.require(natsStreamMaxBytesSetting),
      },
      kvBucket: values.require(natsKvBucketSetting),
      auth,
      ...(Object.keys(tls).length === 0 ? {} : { tls }),
      queue: exporterQueueSettingsOf(values, natsQueueSettings),
    }
  })
