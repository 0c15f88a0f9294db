/**
 * The security headers the service sends, name for name and value for value (helmet's values): written
 * out here, not imported from the service, so that a change to either set fails a test.
 */

/** Every response: OWASP's REST set. */
export const API_SECURITY_HEADERS = {
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
}

/** Besides, on responses over HTTPS only (RFC 6797 section 7.2). */
export const HSTS = { 'strict-transport-security': 'max-age=31536000; includeSubDomains' }

/** HTML pages besides: the rest of helmet's defaults without Content-Security-Policy. */
export const DOCUMENT_SECURITY_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
}
