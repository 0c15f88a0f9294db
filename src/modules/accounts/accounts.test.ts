import { decodeJwt } from 'jose'
import { describe, expect } from 'vitest'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import { anId, createTenant } from '../../../test/helpers/fixtures.js'
import { longestEmail, MEGABYTE, randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import { isSubAccountOf, userHasPermission } from './accounts.service.js'

describe('admin API', () => {
  const admin = (t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v1/admin${url}`, headers: adminHeaders, payload })

  test('refuses requests without the admin token', async ({ t }) => {
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', payload: { name: 'x' } })).statusCode,
    ).toBe(401)
    const wrong = await t.app.inject({
      url: '/v1/admin/accounts/650000000000000000000001',
      headers: bearer('nope'),
    })
    expect(wrong.statusCode).toBe(401)
  })

  test('creates, reads and updates accounts and sub-accounts', async ({ t }) => {
    const parent = await admin(t, 'POST', '/accounts', { name: 'Agency' })
    expect(parent.statusCode).toBe(201)
    const agency = parent.json().data
    expect(agency).toMatchObject({
      name: 'Agency',
      parent_account: null,
      status: 'active',
      tier: 'basic',
      listings: { entity: '' },
      listings_status: false,
    })
    expect(agency._id).toMatch(/^[0-9a-f]{24}$/)

    const child = (
      await admin(t, 'POST', '/accounts', { name: 'Client', parent_account: agency._id, status: 'suspended' })
    ).json().data
    expect(child).toMatchObject({ parent_account: agency._id, status: 'suspended' })

    const updated = await admin(t, 'PATCH', `/accounts/${child._id}`, {
      status: 'active',
      listings_entity: 'ent-9',
    })
    expect(updated.json().data).toMatchObject({
      status: 'active',
      listings: { entity: 'ent-9' },
      listings_status: true,
    })
    expect((await admin(t, 'GET', `/accounts/${child._id}`)).json().data.listings.entity).toBe('ent-9')
  })

  test('answers 404 for an unknown account or parent and 400 naming a bad field', async ({ t }) => {
    expect((await admin(t, 'GET', '/accounts/650000000000000000000009')).json()).toEqual({
      success: false,
      errno: 404,
      message: 'Account not found',
    })
    const orphan = await admin(t, 'POST', '/accounts', {
      name: 'x',
      parent_account: '650000000000000000000009',
    })
    expect(orphan.json().message).toBe('Parent account not found')
    const bad = await admin(t, 'POST', '/accounts', { name: 'x', status: 'closed' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toBe('status must be one of: active, suspended')
    expect((await admin(t, 'GET', '/accounts/not-an-id')).json().message).toBe(
      'id must be a 24-character hex id',
    )
  })

  test('creates users with a membership and a chat identity, and refuses a duplicate email', async ({
    t,
  }) => {
    const account = (await admin(t, 'POST', '/accounts', { name: 'A' })).json().data
    const created = await admin(t, 'POST', '/users', {
      email: 'Grace@Example.com',
      password: 'long enough',
      name: 'Grace Brewster Hopper',
      account_id: account._id,
      main: true,
    })
    expect(created.statusCode).toBe(201)
    const user = created.json().data
    expect(user).toMatchObject({
      email: 'Grace@Example.com',
      first_name: 'Grace',
      last_name: 'Brewster Hopper',
    })
    expect(user).not.toHaveProperty('password_hash')
    expect(user.memberships).toEqual([{ account_id: account._id, main: true, conversation_id: anId }])

    const again = await admin(t, 'POST', '/users', {
      email: 'grace@example.COM',
      password: 'long enough',
      name: 'G',
    })
    expect(again.statusCode).toBe(409)

    const second = (await admin(t, 'POST', '/accounts', { name: 'B' })).json().data
    const member = await admin(t, 'POST', `/users/${user._id}/memberships`, {
      account_id: second._id,
      main: true,
    })
    expect(member.statusCode).toBe(201)
    const memberships = (await admin(t, 'GET', `/users/${user._id}`)).json().data.memberships
    expect(memberships).toHaveLength(2)
    expect(memberships.filter((m: { main: boolean }) => m.main)).toEqual([
      expect.objectContaining({ account_id: second._id }),
    ])
  })

  test('validates user input with messages naming the field', async ({ t }) => {
    const bad = await admin(t, 'POST', '/users', {
      email: 'not-an-email',
      password: 'long enough',
      name: 'x',
    })
    expect(bad.json().message).toBe('email must be a valid email')
    const short = await admin(t, 'POST', '/users', { email: 'a@b.co', password: 'short', name: 'x' })
    expect(short.json().message).toBe('password must be at least 8 characters long')
    const missing = await admin(t, 'POST', '/users', { email: 'a@b.co', password: 'long enough' })
    expect(missing.json().message).toBe('name is required')
  })

  test('grants and takes away platform-wide permissions from the known list', async ({ t }) => {
    const { db } = t.app.platform
    const tenant = await createTenant(t.app)
    expect((await admin(t, 'GET', `/users/${tenant.userId}`)).json().data.permissions).toEqual([])
    expect(await userHasPermission(db, tenant.userId, 'funnel_templates:admin')).toBe(false)
    const granted = await admin(t, 'PUT', `/users/${tenant.userId}/permissions`, {
      permissions: ['funnel_templates:admin', 'funnel_templates:admin'],
    })
    expect(granted.json().data).toMatchObject({ _id: tenant.userId, permissions: ['funnel_templates:admin'] })
    expect(await userHasPermission(db, tenant.userId, 'funnel_templates:admin')).toBe(true)
    const unknown = await admin(t, 'PUT', `/users/${tenant.userId}/permissions`, { permissions: ['root'] })
    expect(unknown.json()).toMatchObject({
      errno: 400,
      message: 'permissions[0] must be one of: funnel_templates:admin',
    })
    const nobody = await admin(t, 'PUT', '/users/650000000000000000000001/permissions', { permissions: [] })
    expect(nobody.json()).toMatchObject({ errno: 404, message: 'User not found' })
    await admin(t, 'PUT', `/users/${tenant.userId}/permissions`, { permissions: [] })
    expect(await userHasPermission(db, tenant.userId, 'funnel_templates:admin')).toBe(false)
  })

  test('tells a sub-account of an account from any other account', async ({ t }) => {
    const { db } = t.app.platform
    const parent = await createTenant(t.app)
    const child = await createTenant(t.app, { parent_account: parent.accountId })
    const other = await createTenant(t.app)
    expect(await isSubAccountOf(db, child.accountId, parent.accountId)).toBe(true)
    expect(await isSubAccountOf(db, parent.accountId, child.accountId)).toBe(false)
    expect(await isSubAccountOf(db, other.accountId, parent.accountId)).toBe(false)
    expect(await isSubAccountOf(db, parent.accountId, parent.accountId)).toBe(false)
  })

  test('mints a token that carries the chat identity, only for members', async ({ t }) => {
    const tenant = await createTenant(t.app, { name: 'Tokens' })
    const claims = decodeJwt(tenant.token)
    expect(claims).toMatchObject({
      uid: tenant.userId,
      account_id: tenant.accountId,
      parent_account: null,
      conversation: { id: tenant.conversationId },
    })
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600)
    const other = await createTenant(t.app)
    const refused = await admin(t, 'POST', '/tokens', { user_id: other.userId, account_id: tenant.accountId })
    expect(refused.json()).toMatchObject({ errno: 404, message: 'User is not a member of this account' })
  })

  test('carries parent_account in tokens of sub-accounts', async ({ t }) => {
    const parent = await createTenant(t.app)
    const child = await createTenant(t.app, { parent_account: parent.accountId })
    expect(decodeJwt(child.token).parent_account).toBe(parent.accountId)
  })

  test('creates contacts unique per lower-cased email within an account', async ({ t }) => {
    const a = await createTenant(t.app)
    const b = await createTenant(t.app)
    const first = await admin(t, 'POST', `/accounts/${a.accountId}/contacts`, {
      email: 'Lead@Example.com',
      name: 'Lead',
    })
    expect(first.statusCode).toBe(201)
    expect(
      (await admin(t, 'POST', `/accounts/${a.accountId}/contacts`, { email: 'lead@example.com' })).statusCode,
    ).toBe(409)
    expect(
      (await admin(t, 'POST', `/accounts/${b.accountId}/contacts`, { email: 'lead@example.com' })).statusCode,
    ).toBe(201)
    const contactId = first.json().data._id
    expect((await admin(t, 'GET', `/accounts/${a.accountId}/contacts/${contactId}`)).statusCode).toBe(200)
    expect((await admin(t, 'GET', `/accounts/${b.accountId}/contacts/${contactId}`)).statusCode).toBe(404)
  })

  test.for([
    ['persons', { first_name: 'Ada', last_name: 'King', email: 'ada@example.com' }],
    ['businesses', { name: 'Acme Bakery', address: '1 Main St', phone: '+15550100' }],
    ['instasites', { url: 'https://acme.example', name: 'Acme site' }],
    ['instareports', { url: 'https://r.example/1', link: 'https://r.example/1/share' }],
  ] as const)('creates and reads %s per account', async ([kind, fields], { t }) => {
    const a = await createTenant(t.app)
    const b = await createTenant(t.app)
    const created = await admin(t, 'POST', `/accounts/${a.accountId}/${kind}`, fields)
    expect(created.statusCode).toBe(201)
    expect(created.json().data).toMatchObject({ ...fields, account_id: a.accountId })
    const id = created.json().data._id
    expect((await admin(t, 'GET', `/accounts/${a.accountId}/${kind}/${id}`)).json().data).toMatchObject(
      fields,
    )
    expect((await admin(t, 'GET', `/accounts/${b.accountId}/${kind}/${id}`)).statusCode).toBe(404)
  })

  // An address of a megabyte reached the unique index on lower(email): a 500.
  test("refuses a user's email longer than SMTP carries, naming it, and keeps the longest", async ({ t }) => {
    const user = (email: string) =>
      admin(t, 'POST', '/users', { email, password: 'a-long-password', name: 'Long' })
    const long = await user(`${randomText(MEGABYTE)}@example.com`)
    expect(long.statusCode).toBe(400)
    expect(long.json().message).toBe(`email must be at most ${EMAIL_MAX_LENGTH} characters long`)
    const longest = longestEmail()
    const created = await user(longest)
    expect(created.statusCode).toBe(201)
    expect(created.json().data.email).toBe(longest)
  })

  test('grants credits once per reference and reports the balance', async ({ t }) => {
    const a = await createTenant(t.app)
    expect((await admin(t, 'GET', `/accounts/${a.accountId}/credits`)).json().data).toEqual({
      account_id: a.accountId,
      balance: 0,
    })
    await admin(t, 'POST', `/accounts/${a.accountId}/credits`, { amount: 5, reference: 'invoice-1' })
    const repeated = await admin(t, 'POST', `/accounts/${a.accountId}/credits`, {
      amount: 5,
      reference: 'invoice-1',
    })
    expect(repeated.json().data.balance).toBe(5)
    const more = await admin(t, 'POST', `/accounts/${a.accountId}/credits`, { amount: 3 })
    expect(more.json().data.balance).toBe(8)
    expect((await admin(t, 'POST', `/accounts/${a.accountId}/credits`, { amount: 0 })).json().message).toBe(
      'amount must be >= 1',
    )
  })
})
