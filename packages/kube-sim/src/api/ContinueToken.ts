import { ApiError } from "./ApiStatus.ts"

/** The opaque `continue` token of a paginated list: the snapshot revision and the last key served. */
export interface ContinueToken {
  readonly revision: number
  readonly startAfter: string
}

export const encodeContinue = (token: ContinueToken): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.revision, start: token.startAfter })).toString(
    "base64url",
  )

export const decodeContinue = (text: string): ContinueToken => {
  try {
    const decoded = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown
    if (
      typeof decoded === "object" &&
      decoded !== null &&
      "rv" in decoded &&
      "start" in decoded &&
      typeof decoded.rv === "number" &&
      typeof decoded.start === "string"
    )
      return { revision: decoded.rv, startAfter: decoded.start }
  } catch {
    // An undecodable token is answered with the API server's own message below.
  }
  throw new ApiError(400, "BadRequest", "continue key is not valid: incorrect encoded start resourceVersion")
}
