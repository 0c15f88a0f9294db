import { randomBytes } from 'node:crypto'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { createAccount } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'

/** `GET /v1/admin/accounts`: the operator's account directory, by name, filtered, paged by cursor. */
describe('account directory', () => {
  const list = (t: TestApp, query: Record<string, string | number>) =>
    t.app.inject({
      url: `/v1/admin/accounts?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)] as [string, string]))}`,
      headers: adminHeaders,
    })
  const names = async (t: TestApp, query: Record<string, string | number>) => {
    const response = await list(t, query)
    expect(response.statusCode).toBe(200)
    return (response.json().data as { name: string }[]).map((account) => account.name)
  }
  /** A prefix no other test's accounts start with. */
  const freshPrefix = () => `q${randomBytes(4).toString('hex')}`

  test('finds the accounts whose name starts with `name`, in any case, by name then id', async ({ t }) => {
    const prefix = freshPrefix()
    const ids: Record<string, string> = {}
    for (const name of [`${prefix} Gamma`, `${prefix.toUpperCase()} alpha`, `${prefix} Beta`, `x ${prefix}`])
      ids[name] = await createAccount(t.app, { name })
    const twins = [await createAccount(t.app, { name: `${prefix} twin` })]
    twins.push(await createAccount(t.app, { name: `${prefix} twin` }))

    const response = await list(t, { name: prefix.toUpperCase() })
    expect(response.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: expect.any(Array),
      pagination: { limit: 20, next_cursor: null },
    })
    const found = response.json().data as { _id: string; name: string }[]
    // The one that has the prefix inside its name is not found; same names go by id.
    expect(found.map((account) => account.name)).toEqual([
      `${prefix.toUpperCase()} alpha`,
      `${prefix} Beta`,
      `${prefix} Gamma`,
      `${prefix} twin`,
      `${prefix} twin`,
    ])
    expect(found.slice(3).map((account) => account._id)).toEqual(twins.sort())
    expect(found[0]).toMatchObject({ _id: ids[`${prefix.toUpperCase()} alpha`], status: 'active' })
    // LIKE's wildcards are letters like any other.
    expect(await names(t, { name: `${prefix}_` })).toEqual([])
    expect(await names(t, { name: `${prefix}%` })).toEqual([])
  })

  test('keeps the accounts of one status, the sub-accounts of one parent, and both with a name', async ({
    t,
  }) => {
    const prefix = freshPrefix()
    const parent = await createAccount(t.app, { name: `${prefix} agency` })
    await createAccount(t.app, { name: `${prefix} one`, parent_account: parent })
    await createAccount(t.app, { name: `${prefix} two`, parent_account: parent, status: 'suspended' })
    await createAccount(t.app, { name: 'z client', parent_account: parent })
    await createAccount(t.app, { name: `${prefix} elsewhere`, status: 'suspended' })

    expect(await names(t, { parent })).toEqual([`${prefix} one`, `${prefix} two`, 'z client'])
    expect(await names(t, { parent, name: prefix })).toEqual([`${prefix} one`, `${prefix} two`])
    expect(await names(t, { parent, status: 'suspended' })).toEqual([`${prefix} two`])
    expect(await names(t, { status: 'suspended', name: prefix })).toEqual([
      `${prefix} elsewhere`,
      `${prefix} two`,
    ])
    expect(await names(t, { status: 'active', name: prefix })).toEqual([`${prefix} agency`, `${prefix} one`])
    expect(await names(t, { status: 'removed', name: prefix })).toEqual([])
  })

  test('reads the list page by page with each next_cursor, to a last page whose cursor is null', async ({
    t,
  }) => {
    const prefix = freshPrefix()
    const expected: string[] = []
    for (const letter of ['e', 'b', 'd', 'a', 'c']) {
      await createAccount(t.app, { name: `${prefix} ${letter}` })
      expected.push(`${prefix} ${letter}`)
    }
    expected.sort()
    const seen: string[] = []
    const cursors: (string | null)[] = []
    let cursor: string | undefined
    do {
      const page = (await list(t, { name: prefix, limit: 2, ...(cursor && { cursor }) })).json()
      expect(page.pagination.limit).toBe(2)
      seen.push(...page.data.map((account: { name: string }) => account.name))
      cursor = page.pagination.next_cursor ?? undefined
      cursors.push(page.pagination.next_cursor)
    } while (cursor)
    expect(seen).toEqual(expected)
    expect(cursors).toEqual([expect.any(String), expect.any(String), null])
    // The whole directory, unfiltered, reads on past its first page too.
    const first = (await list(t, { limit: 1 })).json()
    expect(first.data).toHaveLength(1)
    const second = (await list(t, { limit: 1, cursor: first.pagination.next_cursor })).json()
    expect(second.data[0]._id).not.toBe(first.data[0]._id)
  })

  test('answers 400 naming the field of a bad filter, limit or cursor, and 401 without the admin token', async ({
    t,
  }) => {
    const refusal = async (query: Record<string, string | number>) => {
      const response = await list(t, query)
      expect(response.statusCode).toBe(400)
      return response.json().message as string
    }
    expect(await refusal({ status: 'closed' })).toBe('status must be one of: active, suspended, removed')
    expect(await refusal({ parent: 'nope' })).toBe('parent must be a 24-character hex id')
    expect(await refusal({ name: '' })).toMatch(/^name /)
    expect(await refusal({ name: 'x'.repeat(257) })).toMatch(/^name /)
    expect(await refusal({ limit: 0 })).toMatch(/^limit /)
    expect(await refusal({ limit: 101 })).toMatch(/^limit /)
    expect(await refusal({ cursor: 'not a cursor!' })).toMatch(/^cursor /)
    const ofAnotherList = (
      await t.app.inject({ url: '/v1/admin/users?limit=1', headers: adminHeaders })
    ).json().pagination.next_cursor
    expect(await refusal({ cursor: ofAnotherList })).toBe('cursor is not a cursor of this list')
    const ofNoAccount = Buffer.from(
      JSON.stringify(['accounts_by_name', '650000000000000000000009']),
    ).toString('base64url')
    expect(await refusal({ cursor: ofNoAccount })).toBe(
      'cursor names an account that no longer exists: list again without it',
    )
    expect((await t.app.inject({ url: '/v1/admin/accounts' })).statusCode).toBe(401)
  })
})
