import { spawn } from "node:child_process"

/**
 * An HTTP receiver in its own process, so a bench's figures are the exporter's alone: it reads every
 * body and answers 200, with `contentType` when given. Listens on 127.0.0.1 at a free port.
 */
export const startLocalHttpReceiver = async (options: { readonly path: string; readonly contentType?: string }) => {
  const headers = options.contentType === undefined ? "{}" : JSON.stringify({ "content-type": options.contentType })
  const source = `
import { createServer } from "node:http"
const server = createServer((request, response) => {
  request.on("data", () => {})
  request.on("end", () => { response.writeHead(200, ${headers}); response.end() })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
`
  const child = spawn(process.execPath, ["--input-type=module", "-e", source], { stdio: ["ignore", "pipe", "inherit"] })
  const port = await new Promise<number>((resolve) =>
    child.stdout.once("data", (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
  )
  return {
    url: `http://127.0.0.1:${port}${options.path}`,
    stop: () => new Promise<void>((resolve) => child.once("exit", () => resolve()).kill("SIGTERM")),
  }
}
