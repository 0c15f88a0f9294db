import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { doNotDisturbEntries } from './tables.js'
import { ONE_CLICK_REASON, unsubscribeLinkKey, unsubscribeToken } from './unsubscribe.service.js'

test.override('appEnv', { PUBLIC_BASE_URL: 'https://mail.example.com' })

describe('one-click unsubscribe (RFC 8058)', () => {
  const giveCredits = (t: TestApp, tenant: Tenant) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${tenant.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 10 },
    })

  test.beforeAll(({ t, owner }) => giveCredits(t, owner))

  const send = (t: TestApp, tenant: Tenant, recipients: { email: string }[]) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/mail',
      headers: tenant.headers,
      payload: {
        subject: 'News',
        sender: { email: 'agency@example.com' },
        recipients,
        content: [{ type: 'text/plain', value: 'Hello' }],
        origin: 'newsletter',
      },
    })

  const oneClick = (t: TestApp, link: string) =>
    t.app.inject({
      method: 'POST',
      url: link.replace('https://mail.example.com', ''),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })

  test('adds List-Unsubscribe headers whose link puts the recipient on the do-not-disturb list', async ({
    t,
    owner,
  }) => {
    const sent = (await send(t, owner, [{ email: 'Reader@example.com' }])).json().data
    const headers = sent.body.headers
    expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click')
    const link = /^<(https:\/\/mail\.example\.com\/v1\/e\/mailprovider\/unsubscribe\?token=[\w.-]+)>$/.exec(
      headers['List-Unsubscribe'],
    )?.[1]
    expect(link).toBeDefined()

    const clicked = await oneClick(t, link as string)
    expect(clicked.statusCode).toBe(200)
    const list = await t.app.inject({ url: '/v1/e/mailprovider/dnd?search=reader', headers: owner.headers })
    expect(list.json().data).toEqual([
      expect.objectContaining({ value: 'Reader@example.com', type: 'permanent', reason: ONE_CLICK_REASON }),
    ])
    expect((await oneClick(t, link as string)).statusCode).toBe(200)
    const again = await send(t, owner, [{ email: 'reader@example.com' }])
    expect(again.json().message).toBe('DND enabled for received email(s).')
  })

  test('refuses a link whose address or signature was changed', async ({ t, owner }) => {
    const sent = (await send(t, owner, [{ email: 'someone@example.com' }])).json().data
    const link = /^<(.+)>$/.exec(sent.body.headers['List-Unsubscribe'])?.[1] as string
    const [payload, signature] = (link.split('=').pop() as string).split('.')
    const forged = Buffer.from(JSON.stringify({ a: owner.accountId, e: 'victim@example.com' })).toString(
      'base64url',
    )
    const base = link.slice(0, link.lastIndexOf('=') + 1)
    const response = await oneClick(t, `${base}${forged}.${signature}`)
    expect(response.json()).toMatchObject({ errno: 400, message: 'Invalid unsubscribe link' })
    expect((await oneClick(t, `${base}${payload}.AAAA${signature}`)).statusCode).toBe(400)
  })

  test('a link of a removed account, its removal done, answers as one of an unknown account and writes nothing', async ({
    t,
  }) => {
    const leaving = await createTenant(t.app, { name: 'Leaving' })
    await giveCredits(t, leaving)
    const sent = (await send(t, leaving, [{ email: 'kept@example.com' }])).json().data
    const link = /^<(.+)>$/.exec(sent.body.headers['List-Unsubscribe'])?.[1] as string
    const removal = `/v1/admin/accounts/${leaving.accountId}`
    expect((await t.app.inject({ method: 'DELETE', url: removal, headers: adminHeaders })).statusCode).toBe(
      202,
    )
    await eventually(
      async () => {
        const read = await t.app.inject({ url: `${removal}/removal`, headers: adminHeaders })
        expect(read.json().data.status).toBe('done')
      },
      { timeout: 60_000 },
    )

    const key = unsubscribeLinkKey(t.config.secretsKey, t.config.jwt.secret)
    const unknown = `${link.slice(0, link.lastIndexOf('=') + 1)}${unsubscribeToken(key, newId(), 'kept@example.com')}`
    const clicked = await oneClick(t, link)
    expect({ status: clicked.statusCode, body: clicked.json() }).toEqual({
      status: 200,
      body: (await oneClick(t, unknown)).json(),
    })
    const kept = await t.app.platform.db
      .select()
      .from(doNotDisturbEntries)
      .where(eq(doNotDisturbEntries.value, 'kept@example.com'))
    expect(kept).toEqual([])
  })

  test('adds no link to a message with several recipients', async ({ t, owner }) => {
    const sent = (await send(t, owner, [{ email: 'a@example.com' }, { email: 'b@example.com' }])).json().data
    expect(sent.body.headers['List-Unsubscribe']).toBeUndefined()
  })
})
