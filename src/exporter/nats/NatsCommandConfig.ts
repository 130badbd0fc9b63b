import * as Result from "effect/Result"
import type { ConfigProblem } from "../../component/Component.ts"
import { type Env, type FlagValue, resolveSettings } from "../../config/ResolveSettings.ts"
import type { AnySetting } from "../../config/Setting.ts"
import { type NatsExporterConfig, natsSettings } from "./NatsConfig.ts"

/** The `nats` settings that have a flag, by flag name without the dashes (`nats-url`). */
export const natsSettingFlags: ReadonlyMap<string, AnySetting> = new Map(
  natsSettings.settings.flatMap((setting) =>
    setting.flag === undefined ? [] : [[setting.flag.slice(2), setting] as const],
  ),
)

/**
 * The `nats` exporter's connection settings for a command that reads from NATS (`where`, `tail`):
 * its flags over the `NATS_*` environment variables over the defaults, checked as the service checks them.
 * `options` holds a command's parsed options by name; those that are not `nats` flags are ignored.
 */
export const natsCommandConfig = (
  options: ReadonlyMap<string, string>,
  env: Env,
): Result.Result<NatsExporterConfig, ReadonlyArray<ConfigProblem>> => {
  const flags = new Map<AnySetting, FlagValue>()
  for (const [name, text] of options) {
    const setting = natsSettingFlags.get(name)
    if (setting !== undefined) flags.set(setting, { flag: `--${name}`, text })
  }
  const resolved = resolveSettings(natsSettings.settings, natsSettings.rules ?? [], {
    flags,
    env,
    file: { mapping: undefined, path: "exporters.nats" },
  })
  return resolved.problems.length > 0
    ? Result.fail(resolved.problems)
    : Result.succeed(natsSettings.build(resolved.values))
}
