import type { ComponentSettings } from "../../config/ComponentSettings.ts"
import {
  type QueueSettings,
  queueSettingList,
  queueSettingsOf,
  queueSettingsRule,
} from "../exporterhelper/QueueSettings.ts"

/** The `stdout` section: only the queue and retry settings every exporter has. */
export type StdoutConfig = QueueSettings

export const stdoutSettings: ComponentSettings<StdoutConfig> = {
  settings: queueSettingList,
  rules: [queueSettingsRule],
  build: queueSettingsOf,
}
