import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'

describe('changelog feed', () => {
  let t: TestApp
  let tenant: Tenant
  beforeAll(async () => {
    t = await buildTestApp()
    tenant = await createTenant(t.app)
  })
  afterAll(() => t.close())

  it.each(['/v1/integrations/changelog/posts', '/v1/e/changelog/posts'])(
    'answers %s with an empty page',
    async (url) => {
      const response = await t.app.inject({ url, headers: tenant.headers })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toStrictEqual({ pagination: { page: 1, per_page: 25, total: 0 }, data: [] })
    },
  )

  it('keeps the requested paging', async () => {
    const response = await t.app.inject({
      url: '/v1/e/changelog/posts?page=3&per_page=10',
      headers: tenant.headers,
    })
    expect(response.json()).toStrictEqual({ pagination: { page: 3, per_page: 10, total: 0 }, data: [] })
  })

  it('rejects a bad page with a 400 naming the field', async () => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts?page=0', headers: tenant.headers })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, errno: 400, message: 'page must be >= 1' })
    const perPage = await t.app.inject({ url: '/v1/e/changelog/posts?per_page=abc', headers: tenant.headers })
    expect(perPage.json().message).toBe('per_page must be integer')
  })

  it('requires a bearer token', async () => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts' })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toMatchObject({ success: false, errno: 401, message: 'Unauthorized' })
  })
})
