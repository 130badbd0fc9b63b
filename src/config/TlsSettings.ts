import type { SettingRule, SettingValues } from "./ResolveSettings.ts"
import type { AnySetting, Setting } from "./Setting.ts"
import { stringType } from "./SettingType.ts"

/** PEM files of a TLS client, read when the component starts. */
export interface TlsFiles {
  readonly caFile?: string
  readonly certFile?: string
  readonly keyFile?: string
}

/**
 * The TLS client settings a component's section carries under `tls` (the Collector's `configtls`): a CA,
 * and a client certificate and key set together. Each component names them after itself.
 */
export interface TlsSettings {
  readonly ca: Setting<string>
  readonly cert: Setting<string>
  readonly key: Setting<string>
  /** The three, in the order of the configuration reference. */
  readonly list: ReadonlyArray<AnySetting>
  /** A certificate and key are set together. */
  readonly rule: SettingRule
  /** The files set, none when none is. */
  readonly filesOf: (values: SettingValues) => TlsFiles | undefined
}

export const tlsSettings = (options: {
  /** Of the variables (`NATS` gives `NATS_TLS_CA`) and flags (`--nats-tls-ca`). */
  readonly prefix: string
  /** The noun messages start with (`NATS`: `NATS TLS key`). */
  readonly label: string
  readonly caDescription: string
  readonly certDescription: string
}): TlsSettings => {
  const setting = (key: "ca" | "cert" | "key", noun: string, description: string): Setting<string> => ({
    key: `tls.${key}`,
    env: `${options.prefix}_TLS_${key.toUpperCase()}`,
    flag: `--${options.prefix.toLowerCase().replaceAll("_", "-")}-tls-${key}`,
    type: stringType,
    secret: "none",
    label: `${options.label} TLS ${noun}`,
    description,
  })
  const ca = setting("ca", "CA", options.caDescription)
  const cert = setting("cert", "certificate", options.certDescription)
  const key = setting("key", "key", "Path of the client certificate's private key.")
  return {
    ca,
    cert,
    key,
    list: [ca, cert, key],
    rule: (values) => {
      const certFile = values.get(cert)
      const keyFile = values.get(key)
      return (certFile === undefined) !== (keyFile === undefined)
        ? [
            {
              setting: certFile === undefined ? cert : key,
              message: `${options.label} TLS certificate and key must be set together`,
            },
          ]
        : []
    },
    filesOf: (values) => {
      const caFile = values.get(ca)
      const certFile = values.get(cert)
      const keyFile = values.get(key)
      const files = {
        ...(caFile === undefined ? {} : { caFile }),
        ...(certFile === undefined ? {} : { certFile }),
        ...(keyFile === undefined ? {} : { keyFile }),
      }
      return Object.keys(files).length === 0 ? undefined : files
    },
  }
}
