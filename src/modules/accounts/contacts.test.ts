import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { createTenant, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import { longestEmail, MEGABYTE, randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, PHONE_MAX_LENGTH } from '../../platform/http/schemas.js'
import { SEARCH_WALK } from './contacts.repository.js'

describe('contacts of the caller', () => {
  const ids: string[] = []
  test.beforeAll(async ({ t, owner }) => {
    for (const n of [1, 2, 3, 4, 5]) {
      const response = await t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${owner.accountId}/contacts`,
        headers: adminHeaders,
        payload: { email: `c${n}@example.com`, name: n === 5 ? 'Zed 100%' : `Contact ${n}` },
      })
      ids.push(response.json().data._id)
    }
  })

  test('pages through the account contacts, newest first', async ({ t, owner }) => {
    const response = await t.app.inject({ url: '/v1/contacts?limit=2&page=2', headers: owner.headers })
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({
      success: true,
      message: 'SUCCESS',
      pagination: { total: 5, page: 2, limit: 2, pages: 3 },
    })
    expect(body.data.map((c: { _id: string }) => c._id)).toEqual([ids[2], ids[1]])
  })

  test('defaults to 10 per page and searches name and email literally', async ({ t, owner }) => {
    expect(
      (await t.app.inject({ url: '/v1/contacts', headers: owner.headers })).json().pagination.limit,
    ).toBe(10)
    const found = await t.app.inject({ url: '/v1/contacts?search=100%25', headers: owner.headers })
    expect(found.json().data.map((c: { name: string }) => c.name)).toEqual(['Zed 100%'])
    const byEmail = await t.app.inject({ url: '/v1/contacts?search=C3@EXAMPLE', headers: owner.headers })
    expect(byEmail.json().pagination.total).toBe(1)
  })

  test('finds any part of a name or email, of any case and alphabet, in the account only', async ({
    t,
    owner,
  }) => {
    const neighbour = await createTenant(t.app, { name: 'Same names' })
    const addContact = (accountId: string, name: string, email: string) =>
      t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${accountId}/contacts`,
        headers: adminHeaders,
        payload: { name, email },
      })
    await addContact(owner.accountId, 'Zoë Ångström', 'zoe.a@fjord.example')
    await addContact(neighbour.accountId, 'Zoë Ångström', 'zoe.b@fjord.example')
    const names = async (search: string) =>
      (
        await t.app.inject({
          url: `/v1/contacts?search=${encodeURIComponent(search)}`,
          headers: owner.headers,
        })
      )
        .json()
        .data.map((c: { email: string }) => c.email)
    // Three characters and more are looked up by the account's search keys; fewer by the account's contacts.
    for (const term of ['ÅNGSTRÖM', 'oë Å', 'ngst', 'E.A@FJ', 'Zo', 'ö']) {
      expect(await names(term), term).toEqual(['zoe.a@fjord.example'])
    }
    expect(await names('Ångströms')).toEqual([])
    expect(await names('zoe.b')).toEqual([])
  })

  test('finds a term anywhere in the longest name, whose search keys cover its first 200 characters', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Long names' })
    const tail = `${'needle '.repeat(30)}end`
    const name = `${randomText(NAME_MAX_LENGTH - tail.length)}${tail}`
    const created = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${tenant.accountId}/contacts`,
      headers: adminHeaders,
      payload: { name, email: 'long@example.com' },
    })
    expect(created.statusCode).toBe(201)
    const found = async (search: string) =>
      (
        await t.app.inject({
          url: `/v1/contacts?search=${encodeURIComponent(search)}`,
          headers: tenant.headers,
        })
      ).json().pagination.total
    // Past the keyed characters, and a term itself longer than they are.
    for (const term of ['needle end', tail, 'long@']) expect(await found(term), term).toBe(1)
    expect(await found('needle needle x')).toBe(0)
  })

  test('shows another account nothing', async ({ t, owner, stranger }) => {
    const list = await t.app.inject({ url: '/v1/contacts', headers: stranger.headers })
    expect(list.json().pagination.total).toBe(0)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `/v1/contacts/${ids[0]}` },
      owner,
      stranger,
    )
  })

  test('refuses a page size above 100', async ({ t, owner }) => {
    const response = await t.app.inject({ url: '/v1/contacts?limit=101', headers: owner.headers })
    expect(response.json()).toMatchObject({ errno: 400, message: 'limit must be <= 100' })
  })

  test('walks the contacts with cursors, newest first, the search kept; counts up to the cap', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Many contacts' })
    const insertContacts = (prefix: string, count: number) =>
      t.app.platform.db.execute(sql`insert into contacts (id, account_id, email, name)
        select ${prefix} || lpad(to_hex(n), 20, '0'), ${tenant.accountId}, ${prefix} || '-' || n || '@example.com',
          case when n % 2 = 0 then 'Even ' else 'Odd ' end || n
        from generate_series(1, ${count}::int) as n`)
    await insertContacts('0000', 30)
    const expected = Array.from({ length: 30 }, (_, i) => `0000${(30 - i).toString(16).padStart(20, '0')}`)
    const addNewer = async () => {
      await t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${tenant.accountId}/contacts`,
        headers: adminHeaders,
        payload: { email: 'newer@example.com', name: 'Odd newer' },
      })
    }
    await expectCursorWalk(t.app, '/v1/contacts', tenant.headers, expected, addNewer)
    const odd = await walkWithCursors(t.app, '/v1/contacts?search=odd', tenant.headers, 4)
    expect(odd).toHaveLength(16)
    expect(odd.slice(1)).toEqual(expected.filter((_, i) => i % 2 === 1))
    await expectListRefusals(t.app, '/v1/contacts', tenant.headers, 100)
    await insertContacts('0001', LIST_TOTAL_CAP)
    await expectCappedTotal(t.app, '/v1/contacts', tenant.headers, 100)
  })

  test('finds a term of one or two characters anywhere, past the newest contacts a search walks, in the account only', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Short terms' })
    const neighbour = await createTenant(t.app, { name: 'Short terms next door' })
    // SEARCH_WALK + 10 contacts holding neither q nor z: the walk reads the newest SEARCH_WALK of them only.
    await t.app.platform.db.execute(sql`insert into contacts (id, account_id, email, name)
      select '0002' || lpad(to_hex(n), 20, '0'), ${tenant.accountId}, 'filler-' || n || '@example.com', 'Filler ' || n
      from generate_series(100, ${SEARCH_WALK + 109}::int) as n`)
    const add = (accountId: string, id: string, name: string, email: string) =>
      t.app.platform.db.execute(sql`insert into contacts (id, account_id, email, name)
        values (${id}, ${accountId}, ${email}, ${name})`)
    // Older than every filler: found by the short keys only. Newer: found by the walk.
    await add(tenant.accountId, `0002${'1'.padStart(20, '0')}`, 'Ann Aqzb', 'ann@example.com')
    await add(tenant.accountId, `0002${'2'.padStart(20, '0')}`, 'Bob', 'bob@QZ.example.com')
    await add(tenant.accountId, `0002${'3'.padStart(20, '0')}`, 'Ö Qz', 'o@example.com')
    await add(tenant.accountId, `0003${'1'.padStart(20, '0')}`, 'Newest qZ', 'new@example.com')
    await add(neighbour.accountId, `0002${'4'.padStart(20, '0')}`, 'Qz next door', 'qz@example.com')
    const expected = [
      `0003${'1'.padStart(20, '0')}`,
      ...['3', '2', '1'].map((n) => `0002${n.padStart(20, '0')}`),
    ]
    const list = async (query: string) => {
      const response = await t.app.inject({ url: `/v1/contacts?${query}`, headers: tenant.headers })
      expect(response.statusCode, response.body).toBe(200)
      const body = response.json()
      return { ids: body.data.map((c: { _id: string }) => c._id), pagination: body.pagination }
    }
    for (const term of ['qz', 'QZ', 'z']) {
      expect(await list(`search=${term}`), term).toEqual({
        ids: expected,
        pagination: { total: 4, page: 1, limit: 10, pages: 1 },
      })
    }
    expect(await list('search=%C3%B6')).toEqual({
      ids: [expected[1]],
      pagination: { total: 1, page: 1, limit: 10, pages: 1 },
    })
    expect(await list('search=xq')).toEqual({
      ids: [],
      pagination: { total: 0, page: 1, limit: 10, pages: 0 },
    })
    // By pages, across the walk's end, and with cursors.
    expect(await list('search=qz&limit=3&page=2')).toEqual({
      ids: [expected[3]],
      pagination: { total: 4, page: 2, limit: 3, pages: 2 },
    })
    expect(await walkWithCursors(t.app, '/v1/contacts?search=qz', tenant.headers, 1)).toEqual(expected)
    expect(await walkWithCursors(t.app, '/v1/contacts?search=qz', tenant.headers, 3)).toEqual(expected)
    // A term every contact holds: its total counted up to the cap, by the walk alone.
    await expectCappedTotal(t.app, '/v1/contacts?search=e', tenant.headers, 100)
    const everyOne = await list('search=example&limit=100&page=2')
    expect(everyOne.ids).toHaveLength(100)
    expect(everyOne.pagination).toMatchObject({ total: LIST_TOTAL_CAP, total_exact: false })
  })

  test('creates a contact in the caller account, naming a bad field and refusing a second with the same email', async ({
    t,
    owner,
  }) => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { email: 'New.Person@example.com', name: 'New Person', phone: '+1 555 0100' },
    })
    expect(created.statusCode).toBe(201)
    expect(created.json().data).toMatchObject({
      account_id: owner.accountId,
      email: 'New.Person@example.com',
    })
    const again = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { email: 'new.person@EXAMPLE.com' },
    })
    expect(again.statusCode).toBe(409)
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { email: 'not an email' },
    })
    expect(bad.json()).toMatchObject({ errno: 400, message: expect.stringContaining('email') })
  })

  // An address of a megabyte reached the unique index on (account, lower(email)): a 500.
  test('refuses an email longer than SMTP carries, naming it, and keeps the longest', async ({
    t,
    owner,
  }) => {
    const long = `${randomText(MEGABYTE)}@example.com`
    for (const [method, url] of [
      ['POST', '/v1/contacts'],
      ['PATCH', `/v1/contacts/${ids[0]}`],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: owner.headers, payload: { email: long } })
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe(`email must be at most ${EMAIL_MAX_LENGTH} characters long`)
    }
    const longest = longestEmail()
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: { email: longest },
    })
    expect(created.statusCode).toBe(201)
    expect(created.json().data.email).toBe(longest)
  })

  // 100 contacts with names of a megabyte made a list page of 104 MB.
  test('refuses a name or a phone longer than their bounds, naming the field, and keeps the longest', async ({
    t,
    owner,
  }) => {
    const bounds = { name: NAME_MAX_LENGTH, phone: PHONE_MAX_LENGTH }
    for (const [field, maxLength] of Object.entries(bounds)) {
      for (const [method, url] of [
        ['POST', '/v1/contacts'],
        ['PATCH', `/v1/contacts/${ids[0]}`],
      ] as const) {
        const payload = { [field]: randomText(maxLength + 1) }
        const response = await t.app.inject({ method, url, headers: owner.headers, payload })
        expect(response.statusCode).toBe(400)
        expect(response.json().message).toBe(`${field} must be at most ${maxLength} characters long`)
      }
    }
    const longest = { name: randomText(NAME_MAX_LENGTH), phone: randomText(PHONE_MAX_LENGTH, '0123456789') }
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: owner.headers,
      payload: longest,
    })
    expect(created.statusCode).toBe(201)
    expect(created.json().data).toMatchObject(longest)
  })

  test("changes a contact's fields, but not another account's, nor to the email of another contact", async ({
    t,
    owner,
    stranger,
  }) => {
    const patch = (id: string | undefined, payload: object, headers = owner.headers) =>
      t.app.inject({ method: 'PATCH', url: `/v1/contacts/${id}`, headers, payload })
    const changed = await patch(ids[0], { name: 'Renamed', phone: '+44 20 7946 0000' })
    expect(changed.statusCode).toBe(200)
    expect(changed.json().data).toMatchObject({ _id: ids[0], name: 'Renamed', email: 'c1@example.com' })
    expect((await patch(ids[0], { email: 'C2@example.com' })).statusCode).toBe(409)
    expect((await patch(ids[0], {})).json()).toMatchObject({ errno: 400 })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PATCH', url: `/v1/contacts/${ids[1]}`, payload: { name: 'Taken over' } },
      owner,
      stranger,
    )
  })
})
