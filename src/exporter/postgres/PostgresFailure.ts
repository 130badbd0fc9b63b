/**
 * What went wrong talking to PostgreSQL, in one line a user can act on, and whether the same write
 * may succeed later. Messages come from the server or the socket, never from the connection
 * settings, so they carry no password.
 */
export interface PostgresFailure {
  readonly message: string
  /** The server's error code, when the server answered. */
  readonly sqlState?: string
  readonly retryable: boolean
}

/** SQLSTATE classes a later attempt may get past: connection, transaction rollback (serialization, deadlock), resources, operator intervention, system. */
const retryableClasses = new Set(["08", "40", "53", "57", "58"])

/** Also worth another attempt: a lock or statement timeout, a query cancelled. */
const retryableStates = new Set(["55P03", "57014"])

/** Socket errors of a connection that broke or never came up. */
const retryableSocketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
])

const SQLSTATE = /^[0-9A-Z]{5}$/

const field = (cause: unknown, name: string): unknown =>
  typeof cause === "object" && cause !== null && name in cause ? (cause as Record<string, unknown>)[name] : undefined

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/** The failure a `pg` error, a socket error or anything else thrown by the driver stands for. */
export const postgresFailure = (cause: unknown): PostgresFailure => {
  const code = field(cause, "code")
  const message = oneLine(cause instanceof Error ? cause.message : String(cause)) || "unknown error"
  if (typeof code === "string" && SQLSTATE.test(code) && field(cause, "severity") !== undefined) {
    return {
      message: `${message} (SQLSTATE ${code})`,
      sqlState: code,
      retryable: retryableClasses.has(code.slice(0, 2)) || retryableStates.has(code),
    }
  }
  if (typeof code === "string" && retryableSocketCodes.has(code)) return { message, retryable: true }
  // A certificate the server shows or a server without TLS is a setup to fix, not a passing outage.
  if (
    (typeof code === "string" && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code)) ||
    /does not support SSL/i.test(message)
  ) {
    return { message, retryable: false }
  }
  // Connection terminated, timeouts of the driver and anything unknown: the next attempt may work.
  return { message, retryable: true }
}
