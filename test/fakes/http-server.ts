import { randomInt } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

export interface FakeServer {
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}

/** How a fake server behaves beyond its answers. */
export interface FakeServerOptions {
  /**
   * Up to this long (ms, at random) between receiving a request and handling it, as a provider across the
   * internet takes: a client that dies meanwhile leaves the request handled, as the real one would.
   */
  latencyMs?: number
}

/** A local HTTP server on 127.0.0.1 that records every request and answers through `respond`. */
export async function startFakeServer(
  respond: (request: RecordedRequest, response: ServerResponse) => void,
  options: FakeServerOptions = {},
): Promise<FakeServer> {
  const requests: RecordedRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const recorded = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(recorded)
      if (options.latencyMs) setTimeout(() => respond(recorded, res), randomInt(options.latencyMs + 1))
      else respond(recorded, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}
