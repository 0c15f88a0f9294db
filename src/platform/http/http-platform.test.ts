import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { API_SECURITY_HEADERS, DOCUMENT_SECURITY_HEADERS } from '../../../test/helpers/security-headers.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { registerErrorHandling } from './error-handler.js'
import { Conflict } from './errors.js'

describe('the service shell', () => {
  test('answers GET /status and the readiness check', async ({ t }) => {
    expect((await t.app.inject({ url: '/status' })).json()).toEqual({ status: 'ok' })
    expect((await t.app.inject({ url: '/status/ready' })).json()).toEqual({
      status: 'ok',
      database: 'ok',
      jobs: 'ok',
    })
  })

  test('answers unknown routes with 404 in the error envelope', async ({ t }) => {
    const response = await t.app.inject({ url: '/v1/nowhere?x=1' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({
      success: false,
      errno: 404,
      message: 'Route GET /v1/nowhere not found',
    })
  })

  test('answers malformed JSON with 400 in the error envelope', async ({ t }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/accounts',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      payload: '{"name":',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, errno: 400 })
  })

  test('publishes the OpenAPI document and the reference UI', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    expect(spec.openapi).toMatch(/^3\./)
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining([
        '/v1/integrations/changelog/posts',
        '/v1/e/changelog/posts',
        '/v1/admin/accounts',
        '/status',
      ]),
    )
    const ui = await t.app.inject({ url: '/docs/' })
    expect(ui.statusCode).toBe(200)
    expect(ui.headers['content-type']).toContain('text/html')
  })

  test('sends security headers, a request id, and no CORS headers', async ({ t }) => {
    const response = await t.app.inject({
      url: '/status',
      headers: { origin: 'https://evil.example', 'x-request-id': 'req-123' },
    })
    expect(response.headers['x-content-type-options']).toBe('nosniff')
    expect(response.headers['x-frame-options']).toBe('SAMEORIGIN')
    expect(response.headers['x-request-id']).toBe('req-123')
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/e/changelog/posts',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    })
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
    const forged = await t.app.inject({ url: '/status', headers: { 'x-request-id': 'a\nfake log line' } })
    expect(forged.headers['x-request-id']).toMatch(/^[0-9a-f]{24}$/)
  })

  test.for([
    ['an answer', '/status', 200, {}],
    ['an unknown route', '/v1/nowhere', 404, {}],
    // RFC 6750 3: a 401 names the scheme; without a token, no error code.
    ['a refused token', '/v1/e/changelog/posts', 401, { 'www-authenticate': 'Bearer' }],
  ] as const)('sends exactly the API security header set on %s', async ([_case, url, status, own], { t }) => {
    // Plain HTTP: no HSTS, whatever an untrusted X-Forwarded-Proto says (TRUST_PROXY is off).
    const headers = { 'x-request-id': 'req-456', 'x-forwarded-proto': 'https' }
    const response = await t.app.inject({ url, headers })
    expect(response.statusCode).toBe(status)
    const { date, connection, 'content-type': _type, 'content-length': _length, ...rest } = response.headers
    expect(rest).toStrictEqual({ ...API_SECURITY_HEADERS, ...own, 'x-request-id': 'req-456' })
  })

  test("sends all of helmet's headers with the reference UI, an HTML page", async ({ t }) => {
    const page = await t.app.inject({ url: '/docs/' })
    expect(page.headers['content-type']).toContain('text/html')
    expect(page.headers).toMatchObject({ ...API_SECURITY_HEADERS, ...DOCUMENT_SECURITY_HEADERS })
  })
})

describe('error handler', () => {
  const logged: unknown[] = []
  const app = Fastify({
    logger: { level: 'error', stream: { write: (line: string) => void logged.push(JSON.parse(line)) } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  beforeAll(async () => {
    registerErrorHandling(app)
    app.get('/boom', async () => {
      throw new Error('password=hunter2 leaked in a driver message')
    })
    app.get('/conflict', async () => {
      throw new Conflict('Path already in use', { conflicting_funnel: 'f1' })
    })
    app.post(
      '/mail',
      {
        schema: {
          body: Type.Object({
            recipients: Type.Array(Type.Object({ email: Type.String({ format: 'email' }) }), { minItems: 1 }),
          }),
        },
      },
      async () => ({ ok: true }),
    )
    await app.ready()
  })
  afterAll(() => app.close())

  it('hides unexpected errors behind a 500 and logs them with the request id', async () => {
    const response = await app.inject({ url: '/boom' })
    expect(response.statusCode).toBe(500)
    expect(response.json()).toEqual({ success: false, errno: 500, message: 'Internal Server Error' })
    expect(response.body).not.toContain('hunter2')
    expect(logged).toContainEqual(
      expect.objectContaining({ reqId: expect.any(String), msg: 'unhandled error' }),
    )
  })

  it('maps domain errors to their status with additional_info', async () => {
    expect((await app.inject({ url: '/conflict' })).json()).toEqual({
      success: false,
      errno: 409,
      message: 'Path already in use',
      additional_info: { conflicting_funnel: 'f1' },
    })
  })

  it('names the field in validation errors, nested ones included', async () => {
    const empty = await app.inject({ method: 'POST', url: '/mail', payload: { recipients: [] } })
    expect(empty.statusCode).toBe(400)
    expect(empty.json()).toMatchObject({ errno: 400, message: 'recipients must contain at least 1 items' })
    const nested = await app.inject({
      method: 'POST',
      url: '/mail',
      payload: { recipients: [{ email: 'nope' }] },
    })
    expect(nested.json().message).toBe('recipients[0].email must be a valid email')
    const missing = await app.inject({ method: 'POST', url: '/mail', payload: {} })
    expect(missing.json().message).toBe('recipients is required')
  })
})
