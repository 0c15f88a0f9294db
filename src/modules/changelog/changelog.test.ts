import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
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

/** A GET's status code and JSON body, to compare whole. */
async function answerTo(t: TestApp, url: string, headers?: { authorization: string }) {
  const response = await t.app.inject({ url, headers })
  return { statusCode: response.statusCode, body: response.json() }
}

/** An error answer in the spec's changelog envelope. */
const changelogError = (errno: number, message: string, more: { additional_info?: unknown } = {}) => ({
  statusCode: errno,
  body: { status: false, errno, message, ...more },
})

describe("changelog errors, in the spec's changelog envelope { status: false, errno, message, additional_info }", () => {
  test('rejects a bad page with a 400 naming the field', async ({ t, owner }) => {
    const details = { additional_info: expect.anything() }
    expect(await answerTo(t, '/v1/e/changelog/posts?page=0', owner.headers)).toStrictEqual(
      changelogError(400, 'page must be >= 1', details),
    )
    expect(await answerTo(t, '/v1/e/changelog/posts?per_page=abc', owner.headers)).toStrictEqual(
      changelogError(400, 'per_page must be integer', details),
    )
  })

  test('requires a bearer token', async ({ t }) => {
    expect(await answerTo(t, '/v1/e/changelog/posts')).toStrictEqual(
      changelogError(401, 'Unauthorized', { additional_info: 'missing Authorization header' }),
    )
    const forged = await answerTo(t, '/v1/integrations/changelog/posts', {
      authorization: 'Bearer not-a-token',
    })
    expect(forged).toStrictEqual(changelogError(401, 'Unauthorized', { additional_info: expect.anything() }))
  })

  test.for(['/v1/e/changelog/unknown', '/v1/integrations/changelog/posts/1'])(
    'answers a path under the feed that no route answers, %s, with a 404',
    async (url, { t, owner }) => {
      expect(await answerTo(t, url, owner.headers)).toStrictEqual(
        changelogError(404, `Route GET ${url} not found`),
      )
    },
  )

  test('documents its error answers with the changelog envelope', async ({ t }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    const { responses } = spec.paths['/v1/e/changelog/posts'].get
    for (const status of ['400', '401', '403', '500'])
      expect(JSON.stringify(responses[status])).toContain('#/components/schemas/StatusErrorEnvelope')
    expect(spec.components.schemas.StatusErrorEnvelope).toMatchObject({
      properties: { status: { enum: [false] }, errno: { type: 'integer' } },
      required: expect.arrayContaining(['status', 'errno', 'message']),
    })
  })

  test('leaves the errors of every other route in the shared envelope', async ({ t }) => {
    const unauthorized = await answerTo(t, '/v1/e/mailprovider/dnd')
    expect(unauthorized).toMatchObject({
      statusCode: 401,
      body: { success: false, errno: 401, message: 'Unauthorized' },
    })
    expect(unauthorized.body).not.toHaveProperty('status')
    // A path beside the feed's prefix is not under it.
    const beside = await answerTo(t, '/v1/e/changelogs')
    expect(beside.statusCode).toBe(404)
    expect(beside.body).toStrictEqual({
      success: false,
      errno: 404,
      message: 'Route GET /v1/e/changelogs not found',
    })
  })
})
