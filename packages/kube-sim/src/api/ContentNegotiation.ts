import type { TableObjectPolicy } from "./TableView.ts"

/** What representation a client asked for in `Accept`: plain JSON objects or a `meta.k8s.io/v1` Table. */
export type Representation =
  | { readonly table: false }
  | { readonly table: true; readonly includeObject: TableObjectPolicy }

export const representationOf = (accept: string | undefined, includeObject: string | null): Representation => {
  const offers = (accept ?? "").split(",").map((offer) => offer.trim())
  for (const offer of offers) {
    const [mediaType = "", ...parameters] = offer.split(";").map((part) => part.trim())
    if (mediaType !== "application/json" && mediaType !== "*/*") continue
    const options = new Map(
      parameters.map((parameter) => {
        const [key = "", value = ""] = parameter.split("=")
        return [key.trim(), value.trim()]
      }),
    )
    const as = options.get("as")
    if (as === undefined) return { table: false }
    if (as === "Table" && options.get("g") === "meta.k8s.io" && options.get("v") === "v1")
      return {
        table: true,
        includeObject: includeObject === "None" || includeObject === "Object" ? includeObject : "Metadata",
      }
  }
  return { table: false }
}
