import { Document, isCollection, isNode } from "yaml"
import type { ComponentCatalog } from "./ComponentCatalog.ts"
import { PIPELINE } from "./ConfigFile.ts"
import { redactConfigFile } from "./Redact.ts"
import type { FileMapping } from "./ResolveSettings.ts"
import type { ConfigOrigins } from "./ValueOrigin.ts"

export interface PrintOptions {
  /** Replace secrets with `<redacted>` (default true). */
  readonly redact?: boolean
  /** When given, each value is followed by a comment saying where it came from (`# env WORKERS`). */
  readonly origins?: ConfigOrigins
}

const originComment = (source: string, key: string): string =>
  source === "flag" || source === "env" ? ` ${source} ${key}` : ` ${source}`

/**
 * The effective config (`ResolvedConfig.file`) as YAML, so it can be saved and used as a config file;
 * secrets, as the settings of `catalog` declare them, are redacted unless asked otherwise.
 */
export const printConfig = (file: FileMapping, catalog: ComponentCatalog, options: PrintOptions = {}): string => {
  const document = new Document(options.redact === false ? file : redactConfigFile(file, catalog))
  for (const field of ["receivers", "processors", "exporters"]) {
    const list = document.getIn(["service", "pipelines", PIPELINE, field], true)
    if (isCollection(list)) list.flow = true
  }
  if (options.origins !== undefined) {
    for (const [path, origin] of Object.entries(options.origins)) {
      const node = document.getIn(path.split("."), true)
      if (!isNode(node)) continue
      const comment = originComment(origin.source, origin.key)
      // A block collection cannot carry a trailing comment on its key's line; a flow one can.
      if (isCollection(node)) node.flow = true
      node.comment = comment
    }
  }
  return document.toString({ flowCollectionPadding: false })
}
