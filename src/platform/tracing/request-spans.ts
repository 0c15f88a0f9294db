import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Span } from './span.js'
import { startSpan } from './tracing.js'

/**
 * A server span per request, continuing the caller's trace (`traceparent`) and current while the request
 * is handled: named by method and route pattern, with the status and, once authenticated, the account.
 * Registered only when tracing is on, first, so that every other hook runs inside the span.
 */
export function registerRequestSpans(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, Span>()
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url
    const span = startSpan(route ? `${request.method} ${route}` : request.method, {
      kind: 'server',
      parent: request.headers,
    })
    // An unsampled request costs its sampling decision and its context: no attributes, nothing to end.
    if (span.recording) {
      span.setAttributes({
        'http.request.method': request.method,
        'http.route': route,
        // Without the query string, as the logs have it (signatures, codes, addresses).
        'url.path': request.url.split('?', 1)[0],
        'url.scheme': request.protocol,
      })
      spans.set(request, span)
    }
    // Fastify keeps the async context across body parsing (an AsyncResource), so the handler runs in it too.
    span.run(done)
  })
  const end = (request: FastifyRequest, statusCode: number | undefined) => {
    const span = spans.get(request)
    if (!span) return
    spans.delete(request)
    span.setAttributes({
      'http.response.status_code': statusCode,
      'platform.account_id': request.auth?.account_id,
    })
    if (statusCode === undefined || statusCode >= 500) span.fail(statusCode ?? 'aborted')
    span.end()
  }
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode)
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined)
    done()
  })
}
