import { describe, expect } from 'vitest'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  browser,
  createUser,
  flowOf,
  obtainTokens,
  PASSWORD,
  type RegisteredApp,
  redirected,
  registerApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

const GRANTS = '/v1/auth/oauth/grants'

/** The tenant's user allows the app in their account, through the real pages and /token. */
async function allowApp(t: TestApp, tenant: Tenant, client: RegisteredApp): Promise<void> {
  const user = await t.app.inject({ url: `/v1/admin/users/${tenant.userId}`, headers: adminHeaders })
  await obtainTokens(t.app, client, user.json().data.email as string)
}

test.override('appEnv', { RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' })

describe('the grants API', () => {
  test("lists the apps the caller allowed in their account, and no other account's", async ({
    t,
    owner,
    stranger,
  }) => {
    const client = await registerApp(t.app, { name: 'Listed Hub' })
    await allowApp(t, owner, client)
    const mine = await t.app.inject({ url: GRANTS, headers: owner.headers })
    expect(mine.json().data).toContainEqual({
      client_id: client._id,
      app_name: 'Listed Hub',
      scopes: ['crm.contacts.read', 'analytics.read', 'sites.read'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    })
    const theirs = await t.app.inject({ url: GRANTS, headers: stranger.headers })
    expect(theirs.json().data).not.toContainEqual(expect.objectContaining({ client_id: client._id }))
  })

  test("hides a grant from another account: taking it back there is 404, and the owner's stays", async ({
    t,
    owner,
    stranger,
  }) => {
    const client = await registerApp(t.app)
    await allowApp(t, owner, client)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'DELETE', url: `${GRANTS}/${client._id}` },
      owner,
      stranger,
    )
    const left = await t.app.inject({ url: GRANTS, headers: owner.headers })
    expect(left.json().data).not.toContainEqual(expect.objectContaining({ client_id: client._id }))
  })
})

describe('remembered consent', () => {
  let freshId: string

  // A user who has allowed nothing yet, in the sub-account (an agency's client of the owner account).
  test.beforeAll(async ({ t, subAccount }) => {
    freshId = (await createUser(t.app, 'fresh@flow.example', [subAccount.accountId]))._id
  })

  test('remembers consent per app, user and account, asks again for new scopes, and forgets a revoked grant', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery, exchange } = flowOf(t, client)
    const signIn = async (scope: string) => {
      const b = browser(t.app)
      const page = await b.open(authorizeQuery({ scope }))
      return {
        b,
        page: await b.post('', { token: page.token, email: 'fresh@flow.example', password: PASSWORD }),
      }
    }
    const first = await signIn('crm.contacts.read')
    expect(first.page.status).toBe(200)
    const code = redirected(
      (await first.b.post('/consent', { token: first.page.token, decision: 'allow' })).headers,
    ).searchParams.get('code') as string
    const again = await signIn('crm.contacts.read')
    expect(again.page.status).toBe(303)
    expect(redirected(again.page.headers).searchParams.get('code')).toBeTruthy()
    expect((await signIn('crm.contacts.read analytics.read')).page.status).toBe(200)

    const token = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/tokens',
        headers: adminHeaders,
        payload: { user_id: freshId, account_id: subAccount.accountId },
      })
    ).json().data.token as string
    const grants = () => t.app.inject({ url: '/v1/auth/oauth/grants', headers: bearer(token) })
    expect((await grants()).json().data).toEqual([
      {
        client_id: client._id,
        app_name: 'Reporting Hub',
        scopes: ['crm.contacts.read'],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ])
    const tokens = (await exchange(code)).json()
    const revoke = () =>
      t.app.inject({ method: 'DELETE', url: `/v1/auth/oauth/grants/${client._id}`, headers: bearer(token) })
    expect((await revoke()).json()).toEqual({ success: true, message: 'SUCCESS', data: { revoked: true } })
    expect((await grants()).json().data).toEqual([])
    const refreshed = await tokenRequest(
      t.app,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      [client._id, client.client_secret],
    )
    expect(refreshed.json()).toMatchObject({ error: 'invalid_grant' })
    expect((await signIn('crm.contacts.read')).page.status).toBe(200)
    expect((await revoke()).statusCode).toBe(404)
  })
})
