import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * The security headers helmet sets, computed once from helmet itself: with no Content-Security-Policy
 * (a JSON API) none of them depends on the request, so writing this fixed set on every response keeps
 * every header without running helmet's middleware chain per request.
 */
export function helmetHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = value
    },
    // helmet removes X-Powered-By, which Fastify never sets.
    removeHeader() {},
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error
  })
  return Object.freeze(headers)
}

/**
 * What every response carries: the security headers and the request id (the caller's, or ours), set
 * in one synchronous hook that also runs for 404s and errors.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  const securityHeaders = helmetHeaders({ contentSecurityPolicy: false })
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(securityHeaders).header('x-request-id', request.id)
    done()
  })
}
