import { randomInt } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/**
 * A provider's outage: every request answered `status` (a 5xx), or never answered (`hang`: the caller's
 * timeout ends it). Either way the provider does nothing with the request.
 */
export type FakeOutage = { status: number } | 'hang'

export interface FakeServer {
  url: string
  requests: RecordedRequest[]
  /** Requests that came during an outage, which the provider did nothing with. */
  refused: RecordedRequest[]
  /** Starts an outage (until `recover`): the provider's own answers stop, as when it fails for an hour. */
  fail(outage: FakeOutage): void
  /** Ends the outage: requests are answered as before; requests still hanging are dropped. */
  recover(): void
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
  const refused: RecordedRequest[] = []
  const hanging = new Set<ServerResponse>()
  let outage: FakeOutage | undefined
  const answerDuringOutage = (current: FakeOutage, res: ServerResponse) => {
    if (current === 'hang') {
      hanging.add(res)
      res.on('close', () => hanging.delete(res))
      return
    }
    sendJson(res, current.status, { error: 'service unavailable' })
  }
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
      if (outage) {
        refused.push(recorded)
        return answerDuringOutage(outage, res)
      }
      if (options.latencyMs) setTimeout(() => respond(recorded, res), randomInt(options.latencyMs + 1))
      else respond(recorded, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    refused,
    fail: (next) => {
      outage = next
    },
    recover: () => {
      outage = undefined
      for (const res of hanging) res.destroy()
    },
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
