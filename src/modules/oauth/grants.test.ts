import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { obtainTokens, type RegisteredApp, registerApp } from '../../../test/helpers/oauth.js'
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
