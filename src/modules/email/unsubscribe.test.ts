import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { ONE_CLICK_REASON } from './unsubscribe.service.js'

describe('one-click unsubscribe (RFC 8058)', () => {
  let t: TestApp
  let tenant: Tenant
  beforeAll(async () => {
    t = await buildTestApp({ PUBLIC_BASE_URL: 'https://mail.example.com' })
    tenant = await createTenant(t.app)
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${tenant.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 10 },
    })
  })
  afterAll(() => t.close())

  const send = (recipients: { email: string }[]) =>
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

  const oneClick = (link: string) =>
    t.app.inject({
      method: 'POST',
      url: link.replace('https://mail.example.com', ''),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })

  it('adds List-Unsubscribe headers whose link puts the recipient on the do-not-disturb list', async () => {
    const sent = (await send([{ email: 'Reader@example.com' }])).json().data
    const headers = sent.body.headers
    expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click')
    const link = /^<(https:\/\/mail\.example\.com\/v1\/e\/mailprovider\/unsubscribe\?token=[\w.-]+)>$/.exec(
      headers['List-Unsubscribe'],
    )?.[1]
    expect(link).toBeDefined()

    const clicked = await oneClick(link as string)
    expect(clicked.statusCode).toBe(200)
    const list = await t.app.inject({ url: '/v1/e/mailprovider/dnd?search=reader', headers: tenant.headers })
    expect(list.json().data).toEqual([
      expect.objectContaining({ value: 'Reader@example.com', type: 'permanent', reason: ONE_CLICK_REASON }),
    ])
    expect((await oneClick(link as string)).statusCode).toBe(200)
    const again = await send([{ email: 'reader@example.com' }])
    expect(again.json().message).toBe('DND enabled for received email(s).')
  })

  it('refuses a link whose address or signature was changed', async () => {
    const sent = (await send([{ email: 'someone@example.com' }])).json().data
    const link = /^<(.+)>$/.exec(sent.body.headers['List-Unsubscribe'])?.[1] as string
    const [payload, signature] = (link.split('=').pop() as string).split('.')
    const forged = Buffer.from(JSON.stringify({ a: tenant.accountId, e: 'victim@example.com' })).toString(
      'base64url',
    )
    const base = link.slice(0, link.lastIndexOf('=') + 1)
    const response = await oneClick(`${base}${forged}.${signature}`)
    expect(response.json()).toMatchObject({ errno: 400, message: 'Invalid unsubscribe link' })
    expect((await oneClick(`${base}${payload}.AAAA${signature}`)).statusCode).toBe(400)
  })

  it('adds no link to a message with several recipients', async () => {
    const sent = (await send([{ email: 'a@example.com' }, { email: 'b@example.com' }])).json().data
    expect(sent.body.headers['List-Unsubscribe']).toBeUndefined()
  })
})
