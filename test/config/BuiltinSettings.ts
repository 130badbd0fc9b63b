import { pathIn, settingsSections } from "../../src/config/ComponentCatalog.ts"
import type { AnySetting } from "../../src/config/Setting.ts"
import { builtinComponents } from "../../src/service/BuiltinComponents.ts"

const sections = settingsSections(builtinComponents)

/** Every setting of the service and of the built-in components, in the configuration reference's order. */
export const allSettings: ReadonlyArray<AnySetting> = sections.flatMap((section) => section.settings)

/** The dotted file path of a built-in setting (a component's type as its id); the first section that has it. */
export const settingPath = (setting: AnySetting): string => {
  const section = sections.find((candidate) => candidate.settings.includes(setting))
  return section === undefined ? setting.key : pathIn(section, setting)
}

/** The flags of the service and of the built-in components. */
export { builtinComponents }
