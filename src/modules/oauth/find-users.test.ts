import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'

describe('GET /v1/auth/oauth/findUsers', () => {
  let t: TestApp
  let agency: Tenant
  let ada: { _id: string }
  let client: { _id: string }
  beforeAll(async () => {
    t = await buildTestApp()
    agency = await createTenant(t.app, { name: 'Agency' })
    client = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/accounts',
        headers: adminHeaders,
        payload: { name: 'Client Co' },
      })
    ).json().data
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
    ada = (await user('Ada@Finder.example', agency.accountId)).json().data
    await user('bob@finder.example', client._id)
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/users/${ada._id}/memberships`,
      headers: adminHeaders,
      payload: { account_id: client._id },
    })
  })
  afterAll(() => t.close())

  const find = (query: string, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ url: `/v1/auth/oauth/findUsers?${query}`, headers })

  it('finds users by part of their email, in any case, each with their accounts', async () => {
    const response = await find('email=ADA@finder')
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
            { _id: agency.accountId, name: 'Agency', main: true },
            { _id: client._id, name: 'Client Co', main: false },
          ],
        },
      ],
      pagination: { total: 1, page: 1, limit: 10, pages: 1 },
    })
  })

  it('pages through the matches by email, limit 1 to 50', async () => {
    const second = await find('email=finder.example&limit=1&page=2')
    expect(second.json().data.map((u: { email: string }) => u.email)).toEqual(['bob@finder.example'])
    expect(second.json().pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 })
    expect((await find('email=%25')).json().data).toEqual([])
    for (const query of ['email=a&limit=51', 'email=a&limit=0', 'limit=5']) {
      expect((await find(query)).statusCode).toBe(400)
    }
  })

  it('answers only the admin token: it lists users across accounts', async () => {
    expect((await find('email=finder', {})).statusCode).toBe(401)
    expect((await find('email=finder', agency.headers)).statusCode).toBe(401)
  })
})
