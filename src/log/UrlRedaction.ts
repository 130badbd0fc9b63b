/**
 * The one redactor of URLs for everything the service writes out: log lines, error messages, readiness
 * reasons, printed configuration. A URL keeps its scheme, host, port and path, which is what an operator
 * needs to find the server; its userinfo (user and password) and the values of its query and fragment,
 * where tokens travel, are replaced. It lives beside the logger, which applies it to every line.
 */

/** What a secret reads as wherever it is written out. */
export const REDACTED = "<redacted>"

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i

/**
 * `a=1&b&c=` → `a=<redacted>&<redacted>&c=`: keys are kept, values (and bare parts, which may be tokens)
 * are not; an empty value stays empty, so redacting a redacted URL changes nothing.
 */
const redactQuery = (query: string): string =>
  query
    .split("&")
    .map((part) => {
      if (part === "") return part
      const equals = part.indexOf("=")
      if (equals === -1) return REDACTED
      return equals === part.length - 1 ? part : `${part.slice(0, equals)}=${REDACTED}`
    })
    .join("&")

/**
 * One URL, with or without a scheme (`nats://user:pw@host:4222`, `user:pw@host:4222`), with its secrets
 * replaced. The userinfo runs to the last `@` before the query, so a password holding `@`, `:`, `/` or
 * percent-encoding is hidden whole.
 */
export const redactUrl = (url: string): string => {
  const leading = /^\s*/.exec(url)?.[0] ?? ""
  const afterSpace = url.slice(leading.length)
  const scheme = SCHEME.exec(afterSpace)?.[0] ?? ""
  const rest = afterSpace.slice(scheme.length)
  const queryAt = rest.search(/[?#]/)
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt)
  const at = beforeQuery.lastIndexOf("@")
  const location = at === -1 ? beforeQuery : `${REDACTED}@${beforeQuery.slice(at + 1)}`
  if (queryAt === -1) return `${leading}${scheme}${location}`
  const tail = rest.slice(queryAt)
  const hashAt = tail.indexOf("#")
  const query = tail.startsWith("?") ? (hashAt === -1 ? tail.slice(1) : tail.slice(1, hashAt)) : undefined
  const fragment = hashAt === -1 ? undefined : tail.slice(hashAt + 1)
  return [
    `${leading}${scheme}${location}`,
    query === undefined ? "" : `?${redactQuery(query)}`,
    fragment === undefined ? "" : `#${fragment === "" ? "" : REDACTED}`,
  ].join("")
}

/** A comma list of URLs (a NATS server list), each redacted. */
export const redactUrlList = (urls: string): string => urls.split(",").map(redactUrl).join(",")

// A URL inside free text runs from its scheme to the next blank or quote; commas stay in, for server lists.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/** Free text (an error message from a client library, a log line) with every URL in it redacted. */
export const redactUrlsIn = (text: string): string => text.replace(URL_IN_TEXT, redactUrlList)
