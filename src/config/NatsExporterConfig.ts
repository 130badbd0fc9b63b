import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { decodeExporterSection } from "./ExporterSection.ts"
import {
  natsCredsSetting,
  natsKvBucketSetting,
  natsNkeySeedSetting,
  natsPasswordSetting,
  natsStreamSetting,
  natsSubjectPrefixSetting,
  natsTlsCaSetting,
  natsTlsCertSetting,
  natsTlsKeySetting,
  natsTokenSetting,
  natsUrlSetting,
  natsUserSetting,
} from "./Settings.ts"

/** How the exporter authenticates to NATS: at most one way. */
export type NatsAuth =
  | { readonly kind: "none" }
  | { readonly kind: "creds"; readonly credsFile: string }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "userPassword"; readonly user: string; readonly password: string }
  | { readonly kind: "nkey"; readonly seed: string }

/** The `nats` exporter's section. */
export interface NatsExporterConfig {
  /** Servers, as nats.js takes them. */
  readonly servers: ReadonlyArray<string>
  /** Subjects are `<subjectPrefix>.<cluster>.<node>.<event>`. */
  readonly subjectPrefix: string
  /** JetStream stream; absent: core NATS publish. */
  readonly stream?: string
  readonly kvBucket: string
  readonly auth: NatsAuth
  readonly tls?: {
    readonly caFile?: string
    readonly certFile?: string
    readonly keyFile?: string
  }
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
    const auth: NatsAuth =
      creds !== undefined
        ? { kind: "creds", credsFile: creds }
        : token !== undefined
          ? { kind: "token", token }
          : user !== undefined && password !== undefined
            ? { kind: "userPassword", user, password }
            : seed !== undefined
              ? { kind: "nkey", seed }
              : { kind: "none" }
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
      servers: values
        .require(natsUrlSetting)
        .split(",")
        .map((server) => server.trim()),
      subjectPrefix: values.require(natsSubjectPrefixSetting),
      ...(stream === undefined ? {} : { stream }),
      kvBucket: values.require(natsKvBucketSetting),
      auth,
      ...(Object.keys(tls).length === 0 ? {} : { tls }),
    }
  })
