import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import {
  browser,
  CALLBACK,
  createUser,
  flowOf,
  PASSWORD,
  redirected,
  registerApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

test.override('appEnv', { RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' })

/** The user signs in to the sub-account (an agency's client: its parent is the owner account). */
describe('the OAuth audit record', () => {
  test.beforeAll(async ({ t, subAccount }) => {
    await createUser(t.app, 'solo@flow.example', [subAccount.accountId])
  })

  test('keeps an audit record of consents, token issues, refreshes, revocations and failed client logins', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const audited = await registerApp(t.app)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery({ client_id: audited._id }))
    const consent = await b.post('', { token: signIn.token, email: 'solo@flow.example', password: PASSWORD })
    const decided = await b.post('/consent', { token: consent.token, decision: 'allow' })
    const code = redirected(decided.headers).searchParams.get('code') as string
    const as = (fields: Record<string, string>, secret = audited.client_secret) =>
      tokenRequest(t.app, fields, [audited._id, secret])
    const tokens = (await as({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK })).json()
    await as({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    await as({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }) // a replay
    await as({ grant_type: 'refresh_token', refresh_token: 'x' }, 'wrong secret')

    const audit = await t.app.inject({
      url: `/v1/admin/oauth/audit?client_id=${audited._id}`,
      headers: adminHeaders,
    })
    const events = audit.json().data as {
      event: string
      account_id: string | null
      detail: object
      ip: string
    }[]
    expect(events.map((e) => e.event)).toEqual([
      'client.authentication_failed',
      'grant.revoked',
      'token.refreshed',
      'token.issued',
      'consent.granted',
    ])
    expect(events[1]).toMatchObject({ account_id: subAccount.accountId, detail: { reason: 'code_replay' } })
    expect(events[4]).toMatchObject({
      ip: '127.0.0.1',
      detail: { scopes: ['crm.contacts.read', 'sites.read'] },
    })
    expect(JSON.stringify(events)).not.toContain(tokens.refresh_token)
  })
})
