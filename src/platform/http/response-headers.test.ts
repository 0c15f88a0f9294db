import { describe, expect } from 'vitest'
import {
  API_SECURITY_HEADERS,
  DOCUMENT_SECURITY_HEADERS,
  HSTS,
} from '../../../test/helpers/security-headers.js'
import { test } from '../../../test/helpers/tenant-test.js'

// Behind a TLS proxy on this host: its X-Forwarded-Proto says how the client came.
test.override('appEnv', { TRUST_PROXY: 'loopback' })

const through = (proto: string) => ({ 'x-forwarded-proto': proto, 'x-request-id': 'req-789' })

describe('security headers behind a trusted proxy', () => {
  test('add HSTS to the API set when the client came over HTTPS', async ({ t }) => {
    const response = await t.app.inject({ url: '/status', headers: through('https') })
    const { date, connection, 'content-type': _type, 'content-length': _length, ...rest } = response.headers
    expect(rest).toStrictEqual({ ...API_SECURITY_HEADERS, ...HSTS, 'x-request-id': 'req-789' })
  })

  test('leave HSTS out when it came over plain HTTP', async ({ t }) => {
    const response = await t.app.inject({ url: '/v1/nowhere', headers: through('http') })
    expect(response.statusCode).toBe(404)
    expect(response.headers['strict-transport-security']).toBeUndefined()
    expect(response.headers).toMatchObject(API_SECURITY_HEADERS)
  })

  test("send all of helmet's headers with an HTML page over HTTPS", async ({ t }) => {
    const page = await t.app.inject({ url: '/docs/', headers: through('https') })
    expect(page.headers['content-type']).toContain('text/html')
    expect(page.headers).toMatchObject({ ...API_SECURITY_HEADERS, ...HSTS, ...DOCUMENT_SECURITY_HEADERS })
  })
})
