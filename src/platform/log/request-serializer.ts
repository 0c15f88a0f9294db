import type { FastifyRequest } from 'fastify'

/**
 * Fastify's request log fields without the query string: queries carry signatures (the edge's `_sig`),
 * codes and addresses, and logs hold no query parameters.
 */
export function serializeRequest(request: FastifyRequest) {
  const queryAt = request.url.indexOf('?')
  return {
    method: request.method,
    url: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
    host: request.host,
    remoteAddress: request.ip,
  }
}
