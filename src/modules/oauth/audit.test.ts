import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  expectYearZeroCursorRefused,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
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
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'

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

  test("walks one account's audit events with cursors, or every account's; counts up to the cap", async ({
    t,
    stranger,
  }) => {
    const url = '/v1/admin/oauth/audit'
    // Pairs share a microsecond-precise time.
    const insert = (prefix: string, count: number, accountId: string, at = sql`timestamptz '2025-01-01'`) =>
      t.app.platform.db.execute(sql`insert into oauth_audit_events (id, event, account_id, created_at)
        select ${prefix} || lpad(to_hex(n), 20, '0'), 'token.issued', ${accountId},
          ${at} + (n / 2) * interval '1.2345 ms'
        from generate_series(1, ${count}::int) as n`)
    await insert('00a0', 20, stranger.accountId)
    const newestFirst = Array.from({ length: 20 }, (_, i) => `00a0${(20 - i).toString(16).padStart(20, '0')}`)
    const byAccount = `${url}?account_id=${stranger.accountId}`
    await expectCursorWalk(t.app, byAccount, adminHeaders, newestFirst, async () => {
      await insert('00a2', 1, stranger.accountId, sql`now()`)
    })
    const { rows } = (await t.app.platform.db.execute(
      sql`select id from oauth_audit_events order by created_at desc, id desc`,
    )) as unknown as { rows: { id: string }[] }
    expect(await walkWithCursors(t.app, url, adminHeaders, 7)).toEqual(rows.map((row) => row.id))
    await expectListRefusals(t.app, byAccount, adminHeaders, 200)
    await expectYearZeroCursorRefused(t.app, byAccount, adminHeaders, 'oauth_audit_events')
    await insert('00a1', LIST_TOTAL_CAP, stranger.accountId)
    await expectCappedTotal(t.app, byAccount, adminHeaders, 200)
  })
})
