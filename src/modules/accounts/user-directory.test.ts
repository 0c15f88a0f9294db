import { randomBytes } from 'node:crypto'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { addUser, createAccount } from '../../../test/helpers/fixtures.js'
import { createUser } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

/** `GET /v1/admin/users`: the operator's user directory, newest first, or the one user of an email. */
describe('user directory', () => {
  const list = (t: TestApp, query: Record<string, string | number>) =>
    t.app.inject({
      url: `/v1/admin/users?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)] as [string, string]))}`,
      headers: adminHeaders,
    })
  test('finds the one user of an email, in any case, with the accounts they belong to', async ({ t }) => {
    const main = await createAccount(t.app, { name: 'Navy' })
    const other = await createAccount(t.app, { name: 'Harvard' })
    const email = `grace-${randomBytes(4).toString('hex')}@example.com`
    const { _id: userId } = await createUser(t.app, email, [main, other])
    // Another user whose address contains this one's is not the one asked for.
    await createUser(t.app, `x${email}`, [main])

    const found = await list(t, { email: email.toUpperCase() })
    expect(found.statusCode).toBe(200)
    expect(found.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: [
        {
          _id: userId,
          email,
          name: 'Ada Lovelace',
          accounts: [
            { _id: main, name: 'Navy', main: true },
            { _id: other, name: 'Harvard', main: false },
          ],
        },
      ],
      pagination: { limit: 20, next_cursor: null },
    })
    expect((await list(t, { email: 'nobody@example.com' })).json().data).toEqual([])
  })

  test('lists users newest first, page by page with each next_cursor', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const newest: string[] = []
    for (let n = 0; n < 3; n++) newest.unshift((await addUser(t.app, accountId)).userId)
    const first = (await list(t, { limit: 2 })).json()
    expect(first.data.map((user: { _id: string }) => user._id)).toEqual(newest.slice(0, 2))
    expect(first.data[0].accounts).toEqual([{ _id: accountId, name: 'Acme', main: true }])
    const second = (await list(t, { limit: 2, cursor: first.pagination.next_cursor })).json()
    expect(second.data[0]._id).toBe(newest[2])
    // To the end: the last page says so with a null cursor, and no user is seen twice.
    const seen = new Set<string>()
    let cursor: string | null = ''
    while (cursor !== null) {
      const page: { data: { _id: string }[]; pagination: { next_cursor: string | null } } = (
        await list(t, { limit: 100, cursor })
      ).json()
      for (const user of page.data) {
        expect(seen.has(user._id)).toBe(false)
        seen.add(user._id)
      }
      cursor = page.pagination.next_cursor
    }
    for (const userId of newest) expect(seen.has(userId)).toBe(true)
  })

  test('answers 400 naming a bad email, limit or cursor, and 401 without the admin token', async ({ t }) => {
    const refusal = async (query: Record<string, string | number>) => {
      const response = await list(t, query)
      expect(response.statusCode).toBe(400)
      return response.json().message as string
    }
    expect(await refusal({ email: 'not-an-address' })).toMatch(/^email /)
    expect(await refusal({ limit: 0 })).toMatch(/^limit /)
    expect(await refusal({ cursor: '!' })).toMatch(/^cursor /)
    const ofAccounts = (
      await t.app.inject({ url: '/v1/admin/accounts?limit=1', headers: adminHeaders })
    ).json().pagination.next_cursor
    expect(await refusal({ cursor: ofAccounts })).toBe('cursor is not a cursor of this list')
    expect((await t.app.inject({ url: '/v1/admin/users' })).statusCode).toBe(401)
  })
})
