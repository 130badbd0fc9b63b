import { builtinComponents } from "../../../service/BuiltinComponents.ts"
import { serviceFlags } from "../../ServiceFlags.ts"
import { settingFlagsHelp as settingFlagsHelpOf } from "../../SettingFlagsHelp.ts"

/** The flags of the service's settings and of the components this build has. */
export const runFlags = serviceFlags(builtinComponents)

/** The setting flags of `run` and `demo`, one entry each. */
export const settingFlagsHelp = settingFlagsHelpOf(runFlags)

/** The help of `gpu-serials run`. */
export const runUsage = `Usage: gpu-serials run [--config FILE] [SETTING FLAGS]

Runs the service: watches the device-plugin pods, reads nvidia-smi in them and exports GPU records,
until SIGTERM or SIGINT, then shuts down within SHUTDOWN_TIMEOUT and exits 0 (a second signal exits
at once with 143 or 130). Settings come from flags, then environment variables, then the config
file, then defaults.

Setting flags:
${settingFlagsHelp}

Settings without a flag (secrets, queue and retry settings) are read from their environment
variable or the config file; docs/configuration.md lists every setting.
`
