import { Result } from "effect"
import type { ConfigProblem } from "../component/Component.ts"
import { decodeExporterSection } from "./ExporterSection.ts"
import { httpAuthTokenSetting, httpEndpointSetting, httpTimeoutSetting } from "./Settings.ts"

/** The `http` exporter's section: the Go original's HTTP_ENDPOINT, HTTP_TIMEOUT and HTTP_AUTH_TOKEN. */
export interface HttpExporterConfig {
  /** http:// or https:// URL the JSON array of records is POSTed to. */
  readonly endpoint: string
  readonly timeoutMs: number
  /** Bearer token; secret. */
  readonly authToken?: string
}

/** Checks an `http` section; problems carry keys relative to the section. */
export const decodeHttpExporterConfig = (
  section: unknown,
): Result.Result<HttpExporterConfig, ReadonlyArray<ConfigProblem>> =>
  Result.map(decodeExporterSection("http", section), (values) => {
    const authToken = values.get(httpAuthTokenSetting)
    return {
      endpoint: values.require(httpEndpointSetting),
      timeoutMs: values.require(httpTimeoutSetting),
      ...(authToken === undefined ? {} : { authToken }),
    }
  })
