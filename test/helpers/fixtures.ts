import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { Contact } from '../../src/modules/accounts/contacts.schemas.js'
import { ID_PATTERN } from '../../src/platform/db/ids.js'
import { adminHeaders, bearer } from './app.js'

/** Matches any id the service gives (24 lowercase hex characters). */
export const anId = expect.stringMatching(new RegExp(ID_PATTERN))

export interface Tenant {
  accountId: string
  userId: string
  /** The user's chat identity in the account (`conversation.id` in the token). */
  conversationId: string
  token: string
  headers: { authorization: string }
}

async function adminPost<T>(app: FastifyInstance, url: string, payload: object): Promise<T> {
  const response = await app.inject({
    method: 'POST',
    url: `/v1/admin${url}`,
    headers: adminHeaders,
    payload,
  })
  if (response.statusCode >= 300) throw new Error(`${url} answered ${response.statusCode}: ${response.body}`)
  return response.json().data as T
}

type AccountFields = {
  name?: string
  status?: string
  listings_entity?: string
  parent_account?: string
  tier?: string
}

/** An account (without users) created through the admin API; its id. */
export async function createAccount(app: FastifyInstance, account: AccountFields = {}): Promise<string> {
  return (await adminPost<{ _id: string }>(app, '/accounts', { name: 'Acme', ...account }))._id
}

/** An account with one user and a platform token, provisioned through the admin API. */
export async function createTenant(app: FastifyInstance, account: AccountFields = {}): Promise<Tenant> {
  return addUser(app, await createAccount(app, account))
}

/**
 * Another user of an existing account (a colleague: their own chat identity in the same account), with a
 * platform token carrying it.
 */
export async function addUser(
  app: FastifyInstance,
  accountId: string,
  name = 'Ada Lovelace',
): Promise<Tenant> {
  const user = await adminPost<{ _id: string; memberships: { conversation_id: string }[] }>(app, '/users', {
    email: `user-${randomBytes(4).toString('hex')}@example.com`,
    password: 'correct horse battery',
    name,
    account_id: accountId,
    main: true,
  })
  const { token } = await adminPost<{ token: string }>(app, '/tokens', {
    user_id: user._id,
    account_id: accountId,
  })
  return {
    accountId,
    userId: user._id,
    conversationId: (user.memberships[0] as { conversation_id: string }).conversation_id,
    token,
    headers: bearer(token),
  }
}

export interface RouteCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: string
  payload?: object
}

/**
 * Proves tenant isolation for a route: the owner's token reaches the resource, and another
 * account's token is answered 404 (never 403), so ids do not leak.
 */
export async function expectHiddenFromOtherAccounts(
  app: FastifyInstance,
  call: RouteCall,
  owner: Tenant,
  stranger: Tenant,
): Promise<void> {
  const asStranger = await app.inject({ ...call, headers: stranger.headers })
  expect(asStranger.statusCode, `${call.method} ${call.url} as another account`).toBe(404)
  expect(asStranger.json()).toMatchObject({ success: false, errno: 404 })
  const asOwner = await app.inject({ ...call, headers: owner.headers })
  expect(asOwner.statusCode, `${call.method} ${call.url} as the owner`).toBeLessThan(300)
}

/** The tenant's contacts, newest first (the first 100), through the contacts API. */
export async function contactsOf(app: FastifyInstance, tenant: Tenant, search = ''): Promise<Contact[]> {
  const query = new URLSearchParams({ limit: '100', ...(search && { search }) })
  const response = await app.inject({ url: `/v1/contacts?${query}`, headers: tenant.headers })
  if (response.statusCode !== 200) throw new Error(`GET /v1/contacts answered ${response.statusCode}`)
  return response.json().data
}

/** The tenant's contacts whose email is exactly `email`, through the contacts API. */
export async function contactsWithEmail(app: FastifyInstance, tenant: Tenant, email: string) {
  return (await contactsOf(app, tenant, email)).filter((contact) => contact.email === email)
}
