import { describe, expect } from 'vitest'
import { createTenant } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'

describe('changelog feed', () => {
  test.for(['/v1/integrations/changelog/posts', '/v1/e/changelog/posts'])(
    'answers %s with an empty page',
    async (url, { t, owner }) => {
      const response = await t.app.inject({ url, headers: owner.headers })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toStrictEqual({ pagination: { page: 1, per_page: 25, total: 0 }, data: [] })
    },
  )

  test('keeps the requested paging', async ({ t, owner }) => {
    const response = await t.app.inject({
      url: '/v1/e/changelog/posts?page=3&per_page=10',
      headers: owner.headers,
    })
    expect(response.json()).toStrictEqual({ pagination: { page: 3, per_page: 10, total: 0 }, data: [] })
  })
})

describe("changelog errors, in the spec's changelog envelope { status: false, errno, message, additional_info }", () => {
  test('rejects a bad page with a 400 naming the field', async ({ t, owner }) => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts?page=0', headers: owner.headers })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toStrictEqual({
      status: false,
      errno: 400,
      message: 'page must be >= 1',
      additional_info: expect.anything(),
    })
    const perPage = await t.app.inject({ url: '/v1/e/changelog/posts?per_page=abc', headers: owner.headers })
    expect(perPage.json()).toMatchObject({ status: false, errno: 400, message: 'per_page must be integer' })
  })

  test('requires a bearer token', async ({ t }) => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts' })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toStrictEqual({
      status: false,
      errno: 401,
      message: 'Unauthorized',
      additional_info: 'missing Authorization header',
    })
    const forged = await t.app.inject({
      url: '/v1/integrations/changelog/posts',
      headers: { authorization: 'Bearer not-a-token' },
    })
    expect(forged.statusCode).toBe(401)
    expect(forged.json()).toMatchObject({ status: false, errno: 401, message: 'Unauthorized' })
  })

  test('limits each account to 120 calls a minute', async ({ t, owner }) => {
    const busy = await createTenant(t.app)
    for (let call = 0; call < 120; call++) {
      const response = await t.app.inject({ url: '/v1/e/changelog/posts', headers: busy.headers })
      expect(response.statusCode).toBe(200)
    }
    const limited = await t.app.inject({ url: '/v1/e/changelog/posts', headers: busy.headers })
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toStrictEqual({
      status: false,
      errno: 429,
      message: 'Too many requests',
      additional_info: { retry_after: expect.any(Number) },
    })
    expect(limited.headers['retry-after']).toBeDefined()
    const other = await t.app.inject({ url: '/v1/e/changelog/posts', headers: owner.headers })
    expect(other.statusCode).toBe(200)
  })

  test.for(['/v1/e/changelog/unknown', '/v1/integrations/changelog/posts/1'])(
    'answers a path under the feed that no route answers, %s, with a 404',
    async (url, { t, owner }) => {
      const response = await t.app.inject({ url, headers: owner.headers })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toStrictEqual({
        status: false,
        errno: 404,
        message: `Route GET ${url} not found`,
      })
    },
  )

  test('documents its error answers with the changelog envelope', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    const { responses } = spec.paths['/v1/e/changelog/posts'].get
    for (const status of ['400', '401', '403', '429', '500'])
      expect(JSON.stringify(responses[status])).toContain('#/components/schemas/StatusErrorEnvelope')
    expect(spec.components.schemas.StatusErrorEnvelope).toMatchObject({
      properties: { status: { enum: [false] }, errno: { type: 'integer' } },
      required: expect.arrayContaining(['status', 'errno', 'message']),
    })
  })

  test('leaves the errors of every other route in the shared envelope', async ({ t }) => {
    const unauthorized = await t.app.inject({ url: '/v1/e/mailprovider/dnd' })
    expect(unauthorized.statusCode).toBe(401)
    expect(unauthorized.json()).toMatchObject({ success: false, errno: 401, message: 'Unauthorized' })
    expect(unauthorized.json()).not.toHaveProperty('status')
    // A path beside the feed's prefix is not under it.
    const beside = await t.app.inject({ url: '/v1/e/changelogs' })
    expect(beside.statusCode).toBe(404)
    expect(beside.json()).toStrictEqual({
      success: false,
      errno: 404,
      message: 'Route GET /v1/e/changelogs not found',
    })
  })
})
