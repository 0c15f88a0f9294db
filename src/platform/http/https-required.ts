import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { DomainError } from './errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's spec says `requiresHttps` (route-options.ts). */
    requiresHttps?: boolean
  }
}

/**
 * A request to a route that requires HTTPS, come over plain HTTP. 400, as the token endpoint must answer it
 * (RFC 6749 `invalid_request`): what is wrong is how the client sent the request, not who it is (403 is
 * what a wrong webhook signature answers).
 */
export class HttpsRequired extends DomainError {
  constructor() {
    super(400, 'HTTPS is required')
  }
}

/** What the operator reads when a proxy's `X-Forwarded-Proto: https` was not believed. */
export const UNTRUSTED_PROXY =
  'HTTPS is required: X-Forwarded-Proto said https, but from a peer TRUST_PROXY does not trust'

/**
 * Over TLS to this server, or through a proxy TRUST_PROXY trusts that says `X-Forwarded-Proto: https`:
 * Fastify's `request.protocol` takes the header only from a trusted peer. A refused request that says https
 * came through a proxy TRUST_PROXY does not name (or from a client faking it): the warning names the
 * setting, the header and the peer, which the answer (the spec's message) does not.
 */
const refusePlainHttp: onRequestHookHandler = (request, _reply, done) => {
  if (request.protocol === 'https') return done()
  const forwardedProto = request.headers['x-forwarded-proto']
  if (typeof forwardedProto === 'string' && forwardedProto.includes('https'))
    request.log.warn({ peer: request.socket.remoteAddress, forwardedProto }, UNTRUSTED_PROXY)
  done(new HttpsRequired())
}

/**
 * The spec's "HTTPS is required for all authorization and webhook endpoints in production": each route whose
 * spec says `requiresHttps` gets, as the first of its own hooks, one that refuses a request that did not come
 * over HTTPS, before the route authenticates the caller or reads a body or a signature. The route's error
 * handler answers it in the route's own form (the error envelope, RFC 6749 JSON, a page). A route's own
 * hooks run after its plugin's: a route that authenticates says so on the route, not the plugin (the token
 * endpoint's CORS headers, set by its plugin, stay on the refusal for a browser app to read). Only those
 * routes pay for the check. Called in production only, before the modules register their routes.
 */
export function requireHttpsWhereDeclared(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.requiresHttps) return
    route.onRequest = [refusePlainHttp, ...[route.onRequest ?? []].flat()]
  })
}
