import { createServer } from 'node:http'

/**
 * The baseline: a bare `node:http` server answering every request with the scenario's captured response
 * (same status, content type and body), run as a child process of the bench. Whatever the real server
 * spends beyond this is the framework, the plugins and the route.
 *
 * It listens on BASELINE_PORT (127.0.0.1) once the parent has sent the response over IPC.
 */

/** What the parent sends over IPC: the response to repeat. */
export interface BaselineResponse {
  status: number
  contentType: string
  bodyBase64: string
}

function serve(response: BaselineResponse, port: number): void {
  const body = Buffer.from(response.bodyBase64, 'base64')
  const headers = { 'content-type': response.contentType, 'content-length': body.length }
  const server = createServer((request, reply) => {
    // Read the request to its end before answering, as any real server must.
    request.on('end', () => reply.writeHead(response.status, headers).end(body))
    request.resume()
  })
  server.listen(port, '127.0.0.1')
}

const port = Number(process.env.BASELINE_PORT)
if (!process.send || !Number.isInteger(port) || port <= 0) {
  console.error('bench/baseline.ts runs as a child of bench/run.ts (IPC channel and BASELINE_PORT)')
  process.exit(2)
}
process.once('message', (message) => serve(message as BaselineResponse, port))
