import { describe, expect, vi } from 'vitest'
import { FAKE_LISTINGS_ACCOUNTS, startFakeListingsApi } from '../../../test/fakes/listings-api.js'
import { bearer, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { URL_MAX_LENGTH } from '../../platform/http/schemas.js'
import type { Logger } from '../../platform/log/logger.js'
import { findListingsEntity, getListingsAccount } from './listings.service.js'

const API_KEY = 'listings-test-key'
const URL_PATH = '/v1/e/listings/accounts'

test.override('listingsApiOptions', { apiKey: API_KEY })
test.override('appEnv', ({ listingsApi }) => ({
  LISTINGS_API_URL: listingsApi.url,
  LISTINGS_API_KEY: API_KEY,
}))

const apiAnswer = (accounts = FAKE_LISTINGS_ACCOUNTS) => ({
  meta: { uuid: expect.any(String), errors: [] },
  response: { count: FAKE_LISTINGS_ACCOUNTS.length, accounts },
})

/** Runs `check` against an app built with `env` and a linked tenant of its own, then closes it. */
async function withApp(env: Record<string, string>, check: (t: TestApp, tenant: Tenant) => Promise<void>) {
  const t = await buildTestApp(env)
  try {
    await check(t, await createTenant(t.app, { listings_entity: 'ent-1' }))
  } finally {
    await t.close()
  }
}

describe('listings accounts', () => {
  let linked: Tenant
  test.beforeAll(async ({ t }) => {
    linked = await createTenant(t.app, { listings_entity: 'ent-1' })
  })

  describe('GET /listings/accounts', () => {
    test.for(['/v1/e/listings/accounts', '/v1/integrations/listings/accounts'])(
      'answers %s with the API JSON, calling it with v and the api-key header',
      async (url, { t, listingsApi: fake }) => {
        const response = await t.app.inject({ url, headers: linked.headers })
        expect(response.statusCode).toBe(200)
        expect(response.json()).toStrictEqual(apiAnswer())
        const received = fake.requests.at(-1)
        expect(received?.url.split('?')[0]).toBe('/v2/accounts')
        expect(received?.headers['api-key']).toBe(API_KEY)
        expect(Object.fromEntries(fake.queryOf(-1))).toStrictEqual({ v: '20200525' })
      },
    )

    test("passes the caller's query through, keeping the configured version and key", async ({
      t,
      listingsApi: fake,
    }) => {
      const response = await t.app.inject({
        url: `${URL_PATH}?limit=2&offset=1&filter=bakery&v=19990101&api_key=stolen`,
        headers: linked.headers,
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toStrictEqual(apiAnswer(FAKE_LISTINGS_ACCOUNTS.slice(1, 3)))
      expect(Object.fromEntries(fake.queryOf(-1))).toStrictEqual({
        limit: '2',
        offset: '1',
        filter: 'bakery',
        v: '20200525',
      })
      expect(fake.requests.at(-1)?.headers['api-key']).toBe(API_KEY)
    })

    test('rejects a bad paging parameter with a 400 naming it', async ({ t }) => {
      const response = await t.app.inject({ url: `${URL_PATH}?limit=0`, headers: linked.headers })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ success: false, errno: 400, message: 'limit must be >= 1' })
      // What travels on in the listings API's URL is no longer than a URL carries.
      const longToken = await t.app.inject({
        url: `${URL_PATH}?pageToken=${'p'.repeat(URL_MAX_LENGTH + 1)}`,
        headers: linked.headers,
      })
      expect(longToken.json()).toMatchObject({
        errno: 400,
        message: `pageToken must be at most ${URL_MAX_LENGTH} characters long`,
      })
    })

    test('answers 404 with the message of find when the account has no entity, without calling the API', async ({
      t,
      owner: unlinked,
      listingsApi: fake,
    }) => {
      const before = fake.requests.length
      const response = await t.app.inject({ url: URL_PATH, headers: unlinked.headers })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toStrictEqual({
        success: false,
        errno: 404,
        message: 'Listings not initialized for this account.',
      })
      expect(fake.requests.length).toBe(before)
    })

    test('answers 404 Record not found for a token of an account that does not exist', async ({ t }) => {
      const token = await t.app.platform.tokens.sign(
        { uid: newId(), account_id: newId(), parent_account: null },
        60,
      )
      const response = await t.app.inject({ url: URL_PATH, headers: bearer(token) })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toStrictEqual({ success: false, errno: 404, message: 'Record not found' })
    })

    test('retries a passing API outage, and answers 502 with its errors when it lasts', async ({
      t,
      listingsApi: fake,
    }) => {
      fake.failNext(1)
      const before = fake.requests.length
      const recovered = await t.app.inject({ url: URL_PATH, headers: linked.headers })
      expect(recovered.statusCode).toBe(200)
      expect(fake.requests.length - before).toBe(2)

      fake.failNext(3)
      const failed = await t.app.inject({ url: URL_PATH, headers: linked.headers })
      expect(failed.statusCode).toBe(502)
      expect(failed.json()).toStrictEqual({
        success: false,
        errno: 502,
        message: 'Service unavailable',
        additional_info: {
          status: 503,
          errors: [{ code: 5, type: 'FATAL_ERROR', message: 'Service unavailable' }],
        },
      })
    })

    test('requires a bearer token', async ({ t }) => {
      const response = await t.app.inject({ url: URL_PATH })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ success: false, errno: 401, message: 'Unauthorized' })
    })

    test('limits each account to 120 calls a minute', async ({ t }) => {
      const busy = await createTenant(t.app)
      for (let call = 0; call < 120; call++) {
        const response = await t.app.inject({ url: URL_PATH, headers: busy.headers })
        expect(response.statusCode).toBe(404)
      }
      const limited = await t.app.inject({ url: URL_PATH, headers: busy.headers })
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toMatchObject({ success: false, errno: 429 })
      const other = await t.app.inject({ url: URL_PATH, headers: linked.headers })
      expect(other.statusCode).toBe(200)
    })
  })

  describe('configuration and API errors', () => {
    test('sends the configured LISTINGS_API_VERSION as v', async ({ listingsApi: fake }) => {
      await withApp(
        { LISTINGS_API_URL: fake.url, LISTINGS_API_KEY: API_KEY, LISTINGS_API_VERSION: '20240101' },
        async (other, tenant) => {
          const response = await other.app.inject({ url: URL_PATH, headers: tenant.headers })
          expect(response.statusCode).toBe(200)
          expect(fake.queryOf(-1).get('v')).toBe('20240101')
        },
      )
    })

    test("turns the API's error envelope for a wrong key into a 502 carrying meta.errors", async ({
      listingsApi: fake,
    }) => {
      await withApp({ LISTINGS_API_URL: fake.url, LISTINGS_API_KEY: 'wrong-key' }, async (other, tenant) => {
        const response = await other.app.inject({ url: URL_PATH, headers: tenant.headers })
        expect(response.statusCode).toBe(502)
        expect(response.json()).toStrictEqual({
          success: false,
          errno: 502,
          message: 'Invalid API key',
          additional_info: {
            status: 401,
            errors: [{ code: 10, type: 'FATAL_ERROR', message: 'Invalid API key' }],
          },
        })
        expect(fake.requests.at(-1)?.headers['api-key']).toBe('wrong-key')
      })
    })

    test('answers 503 naming LISTINGS_API_KEY when no key is configured, without calling the API', async ({
      listingsApi: fake,
    }) => {
      const before = fake.requests.length
      await withApp({ LISTINGS_API_URL: fake.url }, async (other, tenant) => {
        const response = await other.app.inject({ url: URL_PATH, headers: tenant.headers })
        expect(response.statusCode).toBe(503)
        expect(response.json()).toMatchObject({ success: false, errno: 503 })
        expect(response.json().message).toContain('LISTINGS_API_KEY')
      })
      expect(fake.requests.length).toBe(before)
    })

    test('answers 502 when the API is unreachable', async () => {
      const closed = await startFakeListingsApi({ apiKey: API_KEY })
      await closed.close()
      await withApp({ LISTINGS_API_URL: closed.url, LISTINGS_API_KEY: API_KEY }, async (other, tenant) => {
        const response = await other.app.inject({ url: URL_PATH, headers: tenant.headers })
        expect(response.statusCode).toBe(502)
        expect(response.json()).toStrictEqual({
          success: false,
          errno: 502,
          message: 'Listings API unreachable',
        })
      })
    })
  })

  describe('service', () => {
    test('find returns the entity id, or the spec error results word for word', async ({
      t,
      owner: unlinked,
    }) => {
      const log = t.app.log
      expect(await findListingsEntity(t.app.platform.db, linked.accountId, log)).toBe('ent-1')
      expect(await findListingsEntity(t.app.platform.db, unlinked.accountId, log)).toStrictEqual({
        error: true,
        message: 'Listings not initialized for this account.',
      })
      expect(await findListingsEntity(t.app.platform.db, newId(), log)).toStrictEqual({
        error: true,
        message: 'Record not found',
      })
    })

    test('find never throws: a database failure is logged and becomes an error result', async () => {
      const failure = new Error('connection lost')
      const brokenDb = {
        select: () => {
          throw failure
        },
      } as unknown as Database
      const log = { error: vi.fn() } as unknown as Logger
      await expect(findListingsEntity(brokenDb, linked.accountId, log)).resolves.toStrictEqual({
        error: true,
        message: 'Listings lookup failed',
      })
      expect(log.error).toHaveBeenCalledWith(
        { err: failure, accountId: linked.accountId },
        'listings entity lookup failed',
      )
    })

    test('getAccount returns the full account, or null', async ({ t }) => {
      expect(await getListingsAccount(t.app.platform.db, linked.accountId)).toMatchObject({
        _id: linked.accountId,
        name: 'Acme',
        listings: { entity: 'ent-1' },
        listings_status: true,
      })
      expect(await getListingsAccount(t.app.platform.db, newId())).toBeNull()
    })
  })
})
