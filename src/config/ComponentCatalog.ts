import type { ConfigurableComponent } from "./ComponentSettings.ts"
import { serviceSettings } from "./ServiceSettings.ts"
import type { AnySetting } from "./Setting.ts"

/**
 * The component types a build has, as the configuration sees them: the distribution's list of
 * factories fits this shape, so flags, the config file's layout, printing, redaction and the
 * configuration reference all follow the registered components.
 */
export interface ComponentCatalog {
  readonly receivers: ReadonlyArray<ConfigurableComponent>
  readonly processors: ReadonlyArray<ConfigurableComponent>
  readonly exporters: ReadonlyArray<ConfigurableComponent>
}

/** Settings and the section of the config file their keys are relative to (empty for the service's own). */
export interface SettingsSection {
  readonly path: string
  readonly settings: ReadonlyArray<AnySetting>
}

/** Every section with settings: the service's own, then each receiver, processor and exporter type. */
export const settingsSections = (catalog: ComponentCatalog): ReadonlyArray<SettingsSection> => [
  { path: "", settings: serviceSettings },
  ...catalog.receivers.map((receiver) => ({
    path: `receivers.${receiver.type}`,
    settings: receiver.settings.settings,
  })),
  ...catalog.processors.map((processor) => ({
    path: `processors.${processor.type}`,
    settings: processor.settings.settings,
  })),
  ...catalog.exporters.map((exporter) => ({
    path: `exporters.${exporter.type}`,
    settings: exporter.settings.settings,
  })),
]

/** The dotted file path of a setting in its section. */
export const pathIn = (section: SettingsSection, setting: AnySetting): string =>
  section.path === "" ? setting.key : `${section.path}.${setting.key}`
