import { createServer } from 'node:http'
import Fastify from 'fastify'

/**
 * The baselines: a bare server answering every request with the scenario's captured response, run as a
 * child process of the bench. Whatever the real server spends beyond it is what it adds.
 * - `node:http` answers the same status, content type and body: beyond it are the framework, the plugins and
 *   the route.
 * - `fastify`, a bare Fastify route of the request's method and path (no plugin, no hook), answers the same
 *   status, body and headers as the real server's answer: beyond it is what the service adds on every
 *   request (authentication, limits, metrics, guards, logging) and the route's own work.
 *
 * It listens on BASELINE_PORT (127.0.0.1) once the parent has sent the response over IPC.
 */

/** What the parent sends over IPC: the response to repeat. */
export interface BaselineResponse {
  status: number
  contentType: string
  bodyBase64: string
  /** The real server's answer's headers, but those any server sets itself (date, length, connection). */
  headers: Record<string, string>
  /** The request's method and path (without its query), for the Fastify route. */
  method: string
  path: string
  /** Which bare server answers; `node:http` when not given. */
  framework?: 'node:http' | 'fastify'
}

function serveWithNode(response: BaselineResponse, port: number): void {
  const body = Buffer.from(response.bodyBase64, 'base64')
  const headers = { 'content-type': response.contentType, 'content-length': body.length }
  const server = createServer((request, reply) => {
    // Read the request to its end before answering, as any real server must.
    request.on('end', () => reply.writeHead(response.status, headers).end(body))
    request.resume()
  })
  server.listen(port, '127.0.0.1')
}

async function serveWithFastify(response: BaselineResponse, port: number): Promise<void> {
  const app = Fastify()
  const body = Buffer.from(response.bodyBase64, 'base64')
  const headers = { ...response.headers, 'content-type': response.contentType }
  app.route({
    method: response.method as 'GET',
    url: response.path,
    handler: (_request, reply) => reply.code(response.status).headers(headers).send(body),
  })
  // The bench's start-up probe asks for `/`.
  if (response.path !== '/') app.get('/', () => 'ok')
  await app.listen({ port, host: '127.0.0.1' })
}

const port = Number(process.env.BASELINE_PORT)
if (!process.send || !Number.isInteger(port) || port <= 0) {
  console.error('bench/baseline.ts runs as a child of bench/run.ts (IPC channel and BASELINE_PORT)')
  process.exit(2)
}
process.once('message', (message) => {
  const response = message as BaselineResponse
  if (response.framework === 'fastify') void serveWithFastify(response, port)
  else serveWithNode(response, port)
})
