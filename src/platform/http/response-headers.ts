import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply } from 'fastify'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * The security headers helmet sets, computed once from helmet itself: with no Content-Security-Policy
 * none of them depends on the request, so writing fixed sets keeps helmet's values without running its
 * middleware chain per request.
 */
function helmetHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
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

const HELMET_HEADERS = helmetHeaders({ contentSecurityPolicy: false })

/**
 * What every response carries, as OWASP's REST Security Cheat Sheet asks of an API: no MIME sniffing, HTTPS
 * only, never framed by another site, not readable by another origin's no-cors request, and no Referer
 * passed on to where a redirect leads. helmet's other headers tell a browser how to treat a document (an
 * HTML page), or speak to Internet Explorer and Flash: pages send them too (`DOCUMENT_SECURITY_HEADERS`).
 * Each header costs every response its bytes and node's check of its name and value; helmet's eleven cost
 * the light GET about a tenth of its ratio (decisions.md, "Security headers: the API's set").
 */
const API_HEADER_NAMES = [
  'cross-origin-resource-policy',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
]
/** Sent over HTTPS only: RFC 6797 section 7.2 forbids it over plain HTTP, where browsers ignore it anyway. */
const HSTS = 'strict-transport-security'

const headersWhere = (keep: (name: string) => boolean) =>
  Object.freeze(Object.fromEntries(Object.entries(HELMET_HEADERS).filter(([name]) => keep(name))))

const API_SECURITY_HEADERS_HTTPS = headersWhere((name) => API_HEADER_NAMES.includes(name))
const API_SECURITY_HEADERS_HTTP = headersWhere((name) => API_HEADER_NAMES.includes(name) && name !== HSTS)
/** The rest of helmet's set, for HTML pages (which carry the API's set as every response does). */
const DOCUMENT_SECURITY_HEADERS = headersWhere((name) => !API_HEADER_NAMES.includes(name))

/** Marks a reply as an HTML page: helmet's whole set. */
export function sendsDocument(reply: FastifyReply): void {
  reply.headers(DOCUMENT_SECURITY_HEADERS)
}

/**
 * What every response carries: the API's security headers and the request id (the caller's, or ours), set
 * in one synchronous hook that also runs for 404s and errors. Behind a TLS proxy, `request.protocol` is the
 * proxy's X-Forwarded-Proto when TRUST_PROXY trusts it.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const secure = request.protocol === 'https'
    reply.headers(secure ? API_SECURITY_HEADERS_HTTPS : API_SECURITY_HEADERS_HTTP)
    reply.header('x-request-id', request.id)
    done()
  })
}
