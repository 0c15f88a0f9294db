import { describe, expect } from 'vitest'
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

  test('rejects a bad page with a 400 naming the field', async ({ t, owner }) => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts?page=0', headers: owner.headers })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, errno: 400, message: 'page must be >= 1' })
    const perPage = await t.app.inject({ url: '/v1/e/changelog/posts?per_page=abc', headers: owner.headers })
    expect(perPage.json().message).toBe('per_page must be integer')
  })

  test('requires a bearer token', async ({ t }) => {
    const response = await t.app.inject({ url: '/v1/e/changelog/posts' })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toMatchObject({ success: false, errno: 401, message: 'Unauthorized' })
  })
})
