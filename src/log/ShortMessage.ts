import * as Predicate from "effect/Predicate"
import { redactUrlsIn } from "./UrlRedaction.ts"

/**
 * The most characters a message quoted from elsewhere keeps (an API server's answer, a client library's
 * error, a defect, a component's health reason) wherever the service writes it: a log line, a readiness
 * reason, an error of its own. Output of nvidia-smi is quoted by `OutputExcerpt`, shorter.
 */
export const shortMessageLength = 160

/**
 * A message on one line, URLs redacted (before cutting, so no cut URL escapes), at most
 * `shortMessageLength` characters. A longer one keeps its start (what failed, where) and its end (why: an
 * admission policy's message, the RBAC rule missing), joined by `…`.
 */
export const shortMessage = (text: string): string => {
  const line = redactUrlsIn(text).replace(/\s+/g, " ").trim()
  if (line.length <= shortMessageLength) return line
  const head = Math.floor((shortMessageLength - 1) / 2)
  return `${line.slice(0, head).trimEnd()}…${line.slice(line.length - (shortMessageLength - 1 - head)).trimStart()}`
}

/**
 * What a defect or a foreign error says, as one short line: its `message` when it has one (an `Error`,
 * a tagged error), the text itself when it is text, its kind otherwise.
 */
export const defectMessage = (defect: unknown): string =>
  shortMessage(
    Predicate.hasProperty(defect, "message") && Predicate.isString(defect.message)
      ? defect.message
      : Predicate.isString(defect)
        ? defect
        : `unexpected ${defect === null ? "null" : typeof defect}`,
  )
