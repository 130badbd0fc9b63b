import type { IncomingMessage, ServerResponse } from "node:http"

/** What a test HTTP server does with the next request: answer with a status, hang, or reset the connection. */
export type ScriptedAnswer =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  | { readonly hang: true }
  | { readonly reset: true }

/** How a request was treated: the HTTP status, `hang` or `reset`. */
export type Treatment = number | "hang" | "reset"

/** Carries out `answer` on a request whose body has been read, and says how it was treated. */
export const carryOut = (answer: ScriptedAnswer, request: IncomingMessage, response: ServerResponse): Treatment => {
  if ("hang" in answer) return "hang"
  if ("reset" in answer) {
    request.socket.destroy()
    return "reset"
  }
  response.writeHead(answer.status, answer.headers ?? {})
  response.end(answer.body ?? "")
  return answer.status
}

/** Whether a treatment accepted the request (a 2xx answer). */
export const isAccepted = (treatment: Treatment): boolean =>
  typeof treatment === "number" && treatment >= 200 && treatment < 300
