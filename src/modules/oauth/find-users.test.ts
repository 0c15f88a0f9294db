import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'

const find = (t: TestApp, query: string, headers: Record<string, string> = adminHeaders) =>
  t.app.inject({ url: `/v1/auth/oauth/findUsers?${query}`, headers })

describe('GET /v1/auth/oauth/findUsers', () => {
  /** Ada, a user of the owner account and (not main) of the stranger's; Bob, of the stranger's only. */
  let ada: { _id: string }
  test.beforeAll(async ({ t, owner, stranger }) => {
    const user = (email: string, accountId: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/admin/users',
        headers: adminHeaders,
        payload: {
          email,
          password: 'correct horse battery',
          name: email.split('@')[0],
          account_id: accountId,
          main: true,
        },
      })
    ada = (await user('Ada@Finder.example', owner.accountId)).json().data
    await user('bob@finder.example', stranger.accountId)
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/users/${ada._id}/memberships`,
      headers: adminHeaders,
      payload: { account_id: stranger.accountId },
    })
  })

  test('finds users by part of their email, in any case, each with their accounts', async ({
    t,
    owner,
    stranger,
  }) => {
    const response = await find(t, 'email=ADA@finder')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: [
        {
          _id: ada._id,
          email: 'Ada@Finder.example',
          name: 'Ada',
          accounts: [
            { _id: owner.accountId, name: 'Owner', main: true },
            { _id: stranger.accountId, name: 'Stranger', main: false },
          ],
        },
      ],
      pagination: { total: 1, page: 1, limit: 10, pages: 1 },
    })
  })

  test('pages through the matches by email, limit 1 to 50', async ({ t }) => {
    const second = await find(t, 'email=finder.example&limit=1&page=2')
    expect(second.json().data.map((u: { email: string }) => u.email)).toEqual(['bob@finder.example'])
    expect(second.json().pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 })
    expect((await find(t, 'email=%25')).json().data).toEqual([])
    for (const query of ['email=a&limit=51', 'email=a&limit=0', 'limit=5']) {
      expect((await find(t, query)).statusCode).toBe(400)
    }
  })

  test('answers only the admin token: it lists users across accounts', async ({ t, owner }) => {
    expect((await find(t, 'email=finder', {})).statusCode).toBe(401)
    expect((await find(t, 'email=finder', owner.headers)).statusCode).toBe(401)
  })
})
