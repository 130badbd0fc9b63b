/**
 * The page's only way out: GET requests to this service's `/api/v1`, each with a timeout and the bearer
 * token the operator typed (kept in sessionStorage, so it dies with the tab and never reaches the URL).
 */

const tokenKey = "gpu-serials.fleet-token"
const requestTimeoutMs = 15_000

/** The API answered 401: the page asks for the token and tries again. */
export class Unauthorized extends Error {
  constructor() {
    super("This service needs an access token.")
  }
}

/** The API answered 404: the GPU or node is not in the inventory. */
export class NotFound extends Error {}

/** Any other failure, with the API's own message when it sent one. */
export class ApiFailure extends Error {}

export const storedToken = (): string | undefined => sessionStorage.getItem(tokenKey) ?? undefined

export const storeToken = (token: string): void => sessionStorage.setItem(tokenKey, token)

export const forgetToken = (): void => sessionStorage.removeItem(tokenKey)

const messageOf = async (response: Response): Promise<string> => {
  try {
    const body: unknown = await response.json()
    if (typeof body === "object" && body !== null && "message" in body && typeof body.message === "string") {
      return body.message
    }
  } catch {
    // The body was not the API's JSON error: the status line says enough.
  }
  return `The service answered ${String(response.status)} ${response.statusText}.`
}

/** GET one API path as JSON; `signal` cancels it when the view changes before it answers. */
export const getJson = async <A>(path: string, signal?: AbortSignal): Promise<A> => {
  const headers = new Headers({ Accept: "application/json" })
  const token = storedToken()
  if (token !== undefined) headers.set("Authorization", `Bearer ${token}`)
  const timeout = AbortSignal.timeout(requestTimeoutMs)
  const response = await fetch(path, {
    headers,
    signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
    credentials: "same-origin",
    cache: "no-cache",
  }).catch((error: unknown) => {
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw new ApiFailure(`The service did not answer within ${String(requestTimeoutMs / 1000)} seconds.`)
    }
    if (error instanceof TypeError) throw new ApiFailure("The service could not be reached.")
    throw error
  })
  if (response.status === 401) throw new Unauthorized()
  if (response.status === 404) throw new NotFound(await messageOf(response))
  if (!response.ok) throw new ApiFailure(await messageOf(response))
  return (await response.json()) as A
}
