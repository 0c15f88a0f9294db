import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import {
  anId,
  createTenant,
  expectHiddenFromOtherAccounts,
  type Tenant,
} from '../../../test/helpers/fixtures.js'
import { longestEmail, MEGABYTE, randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import { addToDoNotDisturb, assertNotOnDoNotDisturb, DND_ENABLED } from './do-not-disturb.service.js'

const add = (t: TestApp, tenant: Tenant, payload: object, prefix = '/v1/e') =>
  t.app.inject({ method: 'POST', url: `${prefix}/mailprovider/dnd`, headers: tenant.headers, payload })

describe('do-not-disturb list', () => {
  test('adds an entry with the spec fields, permanent unless said', async ({ t, owner }) => {
    const response = await add(t, owner, { value: 'Optout@Example.com', reason: 'asked by phone' })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: anId,
        account_id: owner.accountId,
        value: 'Optout@Example.com',
        type: 'permanent',
        reason: 'asked by phone',
        createdAt: expect.any(String),
      },
    })
  })

  test('returns the existing entry when the address is added again, in any case', async ({ t, owner }) => {
    const first = (await add(t, owner, { value: 'twice@example.com', type: 'temporary' })).json().data
    const again = await add(t, owner, { value: 'TWICE@example.com', type: 'permanent' }, '/v1/integrations')
    expect(again.statusCode).toBe(200)
    expect(again.json().data).toEqual(first)
  })

  test('validates the body with messages naming the field', async ({ t, owner }) => {
    expect((await add(t, owner, { value: 'not-an-email' })).json()).toMatchObject({
      errno: 400,
      message: 'value must be a valid email',
    })
    expect((await add(t, owner, { value: 'a@b.co', type: 'forever' })).json().message).toBe(
      'type must be one of: permanent, temporary',
    )
    expect((await add(t, owner, {})).json().message).toBe('value is required')
  })

  // An address of a megabyte reached the unique index on (account, lower(value)): a 500.
  test('refuses an address longer than SMTP carries, naming it, and lists the longest', async ({
    t,
    owner,
  }) => {
    const long = await add(t, owner, { value: `${randomText(MEGABYTE)}@example.com` })
    expect(long.statusCode).toBe(400)
    expect(long.json().message).toBe(`value must be at most ${EMAIL_MAX_LENGTH} characters long`)
    const longest = longestEmail()
    const listed = await add(t, owner, { value: longest })
    expect(listed.statusCode).toBe(201)
    expect(listed.json().data.value).toBe(longest)
  })

  test('lists the account entries, newest first, paginated and searchable', async ({ t }) => {
    const tenant = await createTenant(t.app)
    for (const n of [1, 2, 3]) await add(t, tenant, { value: `list${n}@example.com` })
    const page = await t.app.inject({ url: '/v1/e/mailprovider/dnd?limit=2', headers: tenant.headers })
    expect(page.json()).toMatchObject({ pagination: { total: 3, page: 1, limit: 2, pages: 2 } })
    expect(page.json().data.map((e: { value: string }) => e.value)).toEqual([
      'list3@example.com',
      'list2@example.com',
    ])
    const found = await t.app.inject({ url: '/v1/e/mailprovider/dnd?search=LIST2', headers: tenant.headers })
    expect(found.json().data.map((e: { value: string }) => e.value)).toEqual(['list2@example.com'])
    const none = await t.app.inject({ url: '/v1/e/mailprovider/dnd?search=%25', headers: tenant.headers })
    expect(none.json().pagination.total).toBe(0)
  })

  test('deletes an entry, and another account can neither see nor delete it, under both prefixes', async ({
    t,
    owner,
    stranger,
  }) => {
    for (const prefix of ['/v1/e', '/v1/integrations']) {
      const entry = (await add(t, owner, { value: 'remove-me@example.com' }, prefix)).json().data
      const list = await t.app.inject({
        url: `${prefix}/mailprovider/dnd?search=remove-me`,
        headers: stranger.headers,
      })
      expect(list.json().pagination.total).toBe(0)
      const url = `${prefix}/mailprovider/dnd/${entry._id}`
      await expectHiddenFromOtherAccounts(t.app, { method: 'DELETE', url }, owner, stranger)
      const gone = await t.app.inject({ method: 'DELETE', url, headers: owner.headers })
      expect(gone.json()).toMatchObject({ errno: 404, message: 'Do-not-disturb entry not found' })
    }
  })

  test('requires a bearer token', async ({ t }) => {
    expect((await t.app.inject({ url: '/v1/e/mailprovider/dnd' })).statusCode).toBe(401)
  })

  test('refuses a send to any listed recipient with the spec message, per account', async ({
    t,
    stranger,
  }) => {
    const { db } = t.app.platform
    const tenant = await createTenant(t.app)
    await addToDoNotDisturb(db, tenant.accountId, { value: 'Blocked@Example.com', type: 'permanent' })
    await expect(assertNotOnDoNotDisturb(db, tenant.accountId, ['ok@example.com'])).resolves.toBeUndefined()
    await expect(
      assertNotOnDoNotDisturb(db, tenant.accountId, ['ok@example.com', 'blocked@example.COM']),
    ).rejects.toMatchObject({
      statusCode: 400,
      message: DND_ENABLED,
      additionalInfo: { emails: ['blocked@example.com'] },
    })
    await expect(
      assertNotOnDoNotDisturb(db, stranger.accountId, ['blocked@example.com']),
    ).resolves.toBeUndefined()
    expect(DND_ENABLED).toBe('DND enabled for received email(s).')
  })
})
