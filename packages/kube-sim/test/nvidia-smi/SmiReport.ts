import { SaxesParser } from "saxes"

/** The identity fields of one `<gpu>` of a `-q -x` document. */
export interface ReportedGpu {
  readonly id: string
  readonly fields: Readonly<Record<string, string>>
}

export interface Report {
  readonly root: Readonly<Record<string, string>>
  readonly gpus: ReadonlyArray<ReportedGpu>
  readonly migDevices: ReadonlyArray<number>
}

/** Parses a `-q -x` document strictly (a truncated or malformed one throws) and keeps leaf texts by path. */
export const parseReport = (xml: string): Report => {
  const parser = new SaxesParser()
  const path: string[] = []
  const root: Record<string, string> = {}
  const gpus: Array<{ id: string; fields: Record<string, string> }> = []
  const migDevices: number[] = []
  let text = ""
  parser.on("opentag", (tag) => {
    path.push(tag.name)
    text = ""
    if (tag.name === "gpu" && path.length === 2) {
      gpus.push({ id: String(tag.attributes.id ?? ""), fields: {} })
      migDevices.push(0)
    }
    if (tag.name === "mig_device") migDevices[migDevices.length - 1] = (migDevices[migDevices.length - 1] ?? 0) + 1
  })
  parser.on("text", (chunk) => {
    text += chunk
  })
  parser.on("closetag", () => {
    const key = path.slice(2).join("/")
    const gpu = gpus[gpus.length - 1]
    if (path.length === 2) root[path[1] ?? ""] = text.trim()
    else if (path.length > 2 && gpu !== undefined && path[1] === "gpu") gpu.fields[key] = text.trim()
    path.pop()
    text = ""
  })
  parser.on("error", (error) => {
    throw error
  })
  parser.write(xml).close()
  return { root, gpus, migDevices }
}
