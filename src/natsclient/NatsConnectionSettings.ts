import type { SettingRule, SettingValues } from "../config/ResolveSettings.ts"
import type { AnySetting, Setting } from "../config/Setting.ts"
import { isUrlWithScheme, required } from "../config/SettingRules.ts"
import { stringType } from "../config/SettingType.ts"
import { type TlsFiles, type TlsSettings, tlsSettings } from "../config/TlsSettings.ts"
import { natsServerList } from "./NatsServerList.ts"
import { nkeySeedProblem } from "./NkeySeed.ts"

/** How a client authenticates to NATS: at most one way, the settings' or the server URLs' credentials. */
export type NatsAuth =
  | { readonly kind: "none" }
  | { readonly kind: "creds"; readonly credsFile: string }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "userPassword"; readonly user: string; readonly password: string }
  | { readonly kind: "nkey"; readonly seed: string }

/** Where a client connects and how: what every NATS connection of the service is made from. */
export interface NatsConnectionConfig {
  /** Servers, as nats.js takes them, without the credentials their URLs carried. */
  readonly servers: ReadonlyArray<string>
  readonly auth: NatsAuth
  readonly tls?: TlsFiles
}

/**
 * The settings of one NATS connection, for a component that connects: servers, authentication and TLS,
 * under the component's own variables and flags (`NATS_URL`, `--nats-url` for the exporter).
 */
export interface NatsConnectionSettings {
  readonly url: Setting<string>
  readonly creds: Setting<string>
  readonly token: Setting<string>
  readonly user: Setting<string>
  readonly password: Setting<string>
  readonly nkeySeed: Setting<string>
  readonly tls: TlsSettings
  /** All of them, in the order of the configuration reference. */
  readonly list: ReadonlyArray<AnySetting>
  /** One way to authenticate, a user with its password, URLs that agree on their credentials; a certificate with its key. */
  readonly rules: ReadonlyArray<SettingRule>
  readonly connectionOf: (values: SettingValues) => NatsConnectionConfig
}

const NATS_SCHEMES = ["nats:", "tls:", "ws:", "wss:"]

/**
 * The connection settings named after `prefix` (`NATS` gives `NATS_URL` and `--nats-url`; `HUB_NATS` gives
 * `HUB_NATS_URL` and `--hub-nats-url`), with `label` starting their messages and `defaultUrl` as the URL.
 */
export const natsConnectionSettings = (options: {
  readonly prefix: string
  readonly label: string
  readonly defaultUrl: string
  readonly urlDescription: string
}): NatsConnectionSettings => {
  const { prefix, label } = options
  const flag = (name: string) => `--${prefix.toLowerCase().replaceAll("_", "-")}-${name}`
  const url: Setting<string> = {
    key: "url",
    env: `${prefix}_URL`,
    flag: flag("url"),
    type: stringType,
    default: options.defaultUrl,
    secret: "userinfo",
    label: `${label} URL`,
    description: options.urlDescription,
    check: (value) => {
      const servers = value.split(",").map((server) => server.trim())
      const valid = servers.every((server) =>
        server.includes("://")
          ? isUrlWithScheme(server, NATS_SCHEMES)
          : isUrlWithScheme(`nats://${server}`, NATS_SCHEMES),
      )
      return value.trim() !== "" && valid ? undefined : `${label} URL must be a comma list of nats://host:port servers`
    },
  }
  const creds: Setting<string> = {
    key: "creds",
    env: `${prefix}_CREDS`,
    flag: flag("creds"),
    type: stringType,
    secret: "none",
    label: `${label} credentials file`,
    description: "Path of a NATS .creds file (JWT and nkey seed).",
    check: required(`${label} credentials file path must not be empty`),
  }
  const token: Setting<string> = {
    key: "token",
    env: `${prefix}_TOKEN`,
    type: stringType,
    secret: "value",
    label: `${label} token`,
    description: "Token authentication.",
  }
  const user: Setting<string> = {
    key: "user",
    env: `${prefix}_USER`,
    flag: flag("user"),
    type: stringType,
    secret: "none",
    label: `${label} user`,
    description: "User of user/password authentication.",
  }
  const password: Setting<string> = {
    key: "password",
    env: `${prefix}_PASSWORD`,
    type: stringType,
    secret: "value",
    label: `${label} password`,
    description: "Password of user/password authentication.",
  }
  const nkeySeed: Setting<string> = {
    key: "nkeySeed",
    env: `${prefix}_NKEY_SEED`,
    type: stringType,
    secret: "value",
    label: `${label} nkey seed`,
    description: "User nkey seed (SU...) for nkey authentication.",
    check: (value) => nkeySeedProblem(value)?.replace(/^NATS /, `${label} `),
  }
  const tls = tlsSettings({
    prefix,
    label,
    caDescription: "Path of the CA certificate that signs the servers' certificates.",
    certDescription: "Path of the client certificate.",
  })
  const authRule: SettingRule = (values) => {
    const problems: Array<{ setting: AnySetting; message: string }> = []
    const userValue = values.get(user)
    const passwordValue = values.get(password)
    if (userValue !== undefined && passwordValue === undefined) {
      problems.push({ setting: password, message: `${label} user needs a password` })
    }
    if (passwordValue !== undefined && userValue === undefined) {
      problems.push({ setting: user, message: `${label} password needs a user` })
    }
    const methods: ReadonlyArray<AnySetting> = [creds, token, user, nkeySeed]
    const chosen = methods.filter((setting) => values.get(setting) !== undefined)
    for (const setting of chosen.slice(1)) {
      problems.push({
        setting,
        message: `${label} authentication takes only one of creds, token, user/password or nkey seed`,
      })
    }
    // Credentials in the URL are used only when no authentication setting is set, so they must agree.
    const urlValue = values.get(url)
    if (chosen.length === 0 && urlValue !== undefined && natsServerList(urlValue).credentials.length > 1) {
      problems.push({ setting: url, message: `${label} URL servers must all carry the same credentials` })
    }
    return problems
  }
  const connectionOf = (values: SettingValues): NatsConnectionConfig => {
    const credsFile = values.get(creds)
    const tokenValue = values.get(token)
    const userValue = values.get(user)
    const passwordValue = values.get(password)
    const seed = values.get(nkeySeed)
    const serverList = natsServerList(values.require(url))
    const [fromUrl] = serverList.credentials
    const auth: NatsAuth =
      credsFile !== undefined
        ? { kind: "creds", credsFile }
        : tokenValue !== undefined
          ? { kind: "token", token: tokenValue }
          : userValue !== undefined && passwordValue !== undefined
            ? { kind: "userPassword", user: userValue, password: passwordValue }
            : seed !== undefined
              ? { kind: "nkey", seed }
              : fromUrl === undefined
                ? { kind: "none" }
                : fromUrl.password === undefined
                  ? { kind: "token", token: fromUrl.user }
                  : { kind: "userPassword", user: fromUrl.user, password: fromUrl.password }
    const files = tls.filesOf(values)
    return { servers: serverList.servers, auth, ...(files === undefined ? {} : { tls: files }) }
  }
  return {
    url,
    creds,
    token,
    user,
    password,
    nkeySeed,
    tls,
    list: [url, creds, token, user, password, nkeySeed],
    rules: [authRule, tls.rule],
    connectionOf,
  }
}
