import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { createTenant, expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  expectYearZeroCursorRefused,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { type CommunicationRow, insertCommunication } from './communications.repository.js'
import { communicationEvents } from './tables.js'

describe('communications read API', () => {
  const sender = {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone: '+15550100',
    image: '',
  }

  const outgoing = (
    t: TestApp,
    tenant: Tenant,
    values: Partial<Parameters<typeof insertCommunication>[2]> = {},
  ) =>
    insertCommunication(t.app.platform.db, tenant.accountId, {
      type: 'OUTGOING',
      module: 'SENDGRID',
      origin: 'crm',
      sentBy: sender,
      headers: { 'x-message-id': 'msg-1.filter' },
      body: { subject: 'Hello', attachments: [] },
      msgId: 'msg-1',
      success: true,
      ...values,
    })

  const addEvent = (t: TestApp, owner: Tenant, record: CommunicationRow, event: string, timestamp: number) =>
    t.app.platform.db.insert(communicationEvents).values({
      accountId: record.accountId,
      communicationId: record.id,
      sgEventId: `sg-${newId()}`,
      event,
      email: 'to@example.com',
      timestamp,
      sgMessageId: `${record.msgId}.filter0001`,
      uid: owner.userId,
      useragent: event === 'open' ? 'Mozilla/5.0' : null,
      ip: event === 'open' ? '203.0.113.9' : null,
      url: null,
    })

  const get = (t: TestApp, tenant: Tenant, path: string, prefix = '/v1/e') =>
    t.app.inject({ url: `${prefix}/mailprovider/communications${path}`, headers: tenant.headers })

  test('reads a record with the spec field names and its events in timestamp order', async ({ t, owner }) => {
    const contactId = newId()
    const conversationId = newId()
    const record = await outgoing(t, owner, {
      contactIds: [contactId],
      conversationIds: [conversationId],
      attachments: [
        { bucket: 'local', type: 'application/pdf', file_name: 'a.pdf', size: 3, key: 'k/a.pdf' },
      ],
    })
    await addEvent(t, owner, record, 'open', 1_700_000_100)
    await addEvent(t, owner, record, 'delivered', 1_700_000_050)

    const response = await get(t, owner, `/${record.id}`)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({ success: true, message: 'SUCCESS' })
    expect(body.data).toEqual({
      _id: record.id,
      sent_by: sender,
      origin: 'crm',
      account_id: owner.accountId,
      headers: { 'x-message-id': 'msg-1.filter' },
      body: { subject: 'Hello', attachments: [] },
      msgID: 'msg-1',
      type: 'OUTGOING',
      module: 'SENDGRID',
      message_type: 'EMAIL',
      contact_id: [contactId],
      conversation_id: [conversationId],
      attachments: [
        { bucket: 'local', type: 'application/pdf', file_name: 'a.pdf', size: 3, key: 'k/a.pdf' },
      ],
      success: true,
      events: [
        {
          event: 'delivered',
          email: 'to@example.com',
          timestamp: 1_700_000_050,
          sg_event_id: expect.stringMatching(/^sg-/),
          sg_message_id: 'msg-1.filter0001',
          account_id: owner.accountId,
          uid: owner.userId,
          useragent: null,
          ip: null,
          url: null,
        },
        expect.objectContaining({ event: 'open', useragent: 'Mozilla/5.0', ip: '203.0.113.9' }),
      ],
      delivery_status: 'open',
      createdAt: record.createdAt.toISOString(),
      modifiedAt: record.modifiedAt.toISOString(),
    })
  })

  test('shows the inbound fields only on records that have them', async ({ t, owner }) => {
    const inbound = await insertCommunication(t.app.platform.db, owner.accountId, {
      type: 'INCOMING',
      module: 'SENDGRID',
      sentBy: null,
      msgId: 'reply-1@mail.example.com',
      success: true,
      fromAddress: 'Bob <bob@example.com>',
      toAddresses: ['support@acme.example'],
      subject: 'Re: Hello',
      html: '<p>Thanks</p>',
      text: 'Thanks',
      referenceId: 'msg-1',
    })
    const data = (await get(t, owner, `/${inbound.id}`, '/v1/integrations')).json().data
    expect(data).toMatchObject({
      type: 'INCOMING',
      sent_by: null,
      from: 'Bob <bob@example.com>',
      to: ['support@acme.example'],
      subject: 'Re: Hello',
      html: '<p>Thanks</p>',
      text: 'Thanks',
      referenceID: 'msg-1',
      events: [],
    })

    const sent = await outgoing(t, owner)
    const keys = Object.keys((await get(t, owner, `/${sent.id}`)).json().data)
    for (const key of ['from', 'to', 'subject', 'html', 'text', 'referenceID'])
      expect(keys).not.toContain(key)
  })

  test('lists newest first, paginated, each record with its own events', async ({ t, owner }) => {
    const tenant = await createTenant(t.app)
    const base = Date.now() - 60_000
    const records: CommunicationRow[] = []
    for (const n of [0, 1, 2]) {
      records.push(await outgoing(t, tenant, { msgId: `list-${n}`, createdAt: new Date(base + n * 1000) }))
    }
    const [first, second, third] = records as [CommunicationRow, CommunicationRow, CommunicationRow]
    await addEvent(t, owner, first, 'delivered', 1_700_000_001)
    await addEvent(t, owner, third, 'delivered', 1_700_000_003)
    await addEvent(t, owner, third, 'click', 1_700_000_004)

    const page1 = await get(t, tenant, '?limit=2')
    expect(page1.statusCode).toBe(200)
    expect(page1.json()).toMatchObject({
      success: true,
      message: 'SUCCESS',
      pagination: { total: 3, page: 1, limit: 2, pages: 2 },
    })
    const shown = page1.json().data as { _id: string; events: { event: string }[] }[]
    expect(shown.map((c) => c._id)).toEqual([third.id, second.id])
    expect(shown.map((c) => c.events.map((e) => e.event))).toEqual([['delivered', 'click'], []])

    const page2 = (await get(t, tenant, '?limit=2&page=2', '/v1/integrations')).json()
    expect(page2.data.map((c: { _id: string }) => c._id)).toEqual([first.id])
    expect(page2.data[0].events.map((e: { timestamp: number }) => e.timestamp)).toEqual([1_700_000_001])

    const defaults = (await get(t, tenant, '')).json().pagination
    expect(defaults).toEqual({ total: 3, page: 1, limit: 10, pages: 1 })
  })

  test('walks the records with cursors, newest first, a filter kept; counts up to the cap', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const url = '/v1/e/mailprovider/communications'
    // Pairs share a microsecond-precise time; every third is a reply.
    const insertRecords = (prefix: string, count: number) =>
      t.app.platform.db.execute(sql`insert into communications (id, account_id, type, module, success, created_at)
        select ${prefix} || lpad(to_hex(n), 20, '0'), ${tenant.accountId},
          case when n % 3 = 0 then 'INCOMING' else 'OUTGOING' end, 'SENDGRID', true,
          timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'
        from generate_series(1, ${count}::int) as n`)
    await insertRecords('0000', 30)
    const idOf = (n: number) => `0000${n.toString(16).padStart(20, '0')}`
    const newestFirst = Array.from({ length: 30 }, (_, i) => 30 - i)
    await expectCursorWalk(t.app, url, tenant.headers, newestFirst.map(idOf), async () => {
      await outgoing(t, tenant)
    })
    const replies = await walkWithCursors(t.app, `${url}?type=INCOMING`, tenant.headers, 3)
    expect(replies).toEqual(newestFirst.filter((n) => n % 3 === 0).map(idOf))
    await expectListRefusals(t.app, url, tenant.headers, 100)
    await expectYearZeroCursorRefused(t.app, url, tenant.headers, 'communications')
    await insertRecords('0001', LIST_TOTAL_CAP)
    await expectCappedTotal(t.app, url, tenant.headers, 100)
  })

  test('filters by contact, conversation and type', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const [alice, bob, thread] = [newId(), newId(), newId()]
    const toBoth = await outgoing(t, tenant, { contactIds: [alice, bob], conversationIds: [thread, newId()] })
    const toBob = await outgoing(t, tenant, { contactIds: [bob] })
    const reply = await insertCommunication(t.app.platform.db, tenant.accountId, {
      type: 'INCOMING',
      module: 'SENDGRID',
      success: true,
      contactIds: [alice],
      conversationIds: [thread],
    })
    const ids = async (query: string) =>
      ((await get(t, tenant, `?${query}`)).json().data as { _id: string }[]).map((c) => c._id).sort()

    expect(await ids(`contact_id=${alice}`)).toEqual([toBoth.id, reply.id].sort())
    expect(await ids(`contact_id=${bob}`)).toEqual([toBoth.id, toBob.id].sort())
    expect(await ids(`conversation_id=${thread}`)).toEqual([toBoth.id, reply.id].sort())
    expect(await ids('type=INCOMING')).toEqual([reply.id])
    expect(await ids('type=OUTGOING')).toEqual([toBoth.id, toBob.id].sort())
    expect(await ids(`contact_id=${bob}&type=INCOMING`)).toEqual([])
    expect(await ids(`contact_id=${newId()}`)).toEqual([])
  })

  test('streams an attachment with its type, a safe file name and its size', async ({ t, owner }) => {
    const { storage } = t.app.platform
    const bytes = Buffer.from('%PDF-1.4 fake but binary \u0000\u00ff', 'latin1')
    const pdf = await storage.put(`attachments/${owner.accountId}/report.pdf`, bytes, 'application/pdf')
    const odd = await storage.put(`attachments/${owner.accountId}/odd.bin`, Buffer.from('odd'))
    const record = await outgoing(t, owner, {
      attachments: [
        { ...pdf, type: 'application/pdf', file_name: 'report.pdf' },
        { ...odd, type: 'text/html\r\nx-injected: 1', file_name: 'Résumé "final"\\.txt' },
        { bucket: pdf.bucket, type: 'text/plain', file_name: 'gone.txt', size: 4, key: 'attachments/none' },
      ],
    })

    const first = await get(t, owner, `/${record.id}/attachments/0`)
    expect(first.statusCode).toBe(200)
    expect(first.rawPayload.equals(bytes)).toBe(true)
    expect(first.headers['content-type']).toBe('application/pdf')
    expect(first.headers['content-disposition']).toBe('attachment; filename="report.pdf"')
    expect(first.headers['content-length']).toBe(String(bytes.length))

    const second = await get(t, owner, `/${record.id}/attachments/1`, '/v1/integrations')
    expect(second.statusCode).toBe(200)
    expect(second.body).toBe('odd')
    expect(second.headers['content-type']).toBe('application/octet-stream')
    expect(second.headers['x-injected']).toBeUndefined()
    expect(second.headers['content-disposition']).toBe(
      `attachment; filename="R_sum_ \\"final\\"\\\\.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22%5C.txt`,
    )

    const missingObject = await get(t, owner, `/${record.id}/attachments/2`)
    expect(missingObject.json()).toMatchObject({ errno: 404, message: 'Attachment not found' })
    const pastTheEnd = await get(t, owner, `/${record.id}/attachments/3`)
    expect(pastTheEnd.json()).toMatchObject({ errno: 404, message: 'Attachment not found' })
  })

  test('answers 404 for a record that does not exist', async ({ t, owner }) => {
    const id = newId()
    expect((await get(t, owner, `/${id}`)).json()).toEqual({
      success: false,
      errno: 404,
      message: 'Communication not found',
    })
    expect((await get(t, owner, `/${id}/attachments/0`)).json()).toMatchObject({
      errno: 404,
      message: 'Communication not found',
    })
  })

  test('validates the query and path with messages naming the field', async ({ t, owner }) => {
    const message = async (path: string) => {
      const response = await get(t, owner, path)
      expect(response.statusCode).toBe(400)
      return response.json().message
    }
    expect(await message('?limit=101')).toBe('limit must be <= 100')
    expect(await message('?page=0')).toBe('page must be >= 1')
    expect(await message('?type=SPAM')).toBe('type must be one of: OUTGOING, INCOMING')
    expect(await message('?contact_id=abc')).toBe('contact_id must be a 24-character hex id')
    expect(await message('?conversation_id=abc')).toBe('conversation_id must be a 24-character hex id')
    expect(await message('/not-an-id')).toBe('id must be a 24-character hex id')
    expect(await message(`/${newId()}/attachments/-1`)).toBe('index must be >= 0')
    expect(await message(`/${newId()}/attachments/first`)).toBe('index must be integer')
  })

  test("hides a record and its attachments from other accounts, and lists none of another account's", async ({
    t,
    owner,
    stranger,
  }) => {
    const { storage } = t.app.platform
    const contactId = newId()
    const file = await storage.put(`attachments/${owner.accountId}/private.txt`, Buffer.from('secret'))
    const record = await outgoing(t, owner, {
      contactIds: [contactId],
      attachments: [{ ...file, type: 'text/plain', file_name: 'private.txt' }],
    })
    await addEvent(t, owner, record, 'delivered', 1_700_000_000)
    for (const prefix of ['/v1/e', '/v1/integrations']) {
      const url = `${prefix}/mailprovider/communications/${record.id}`
      await expectHiddenFromOtherAccounts(t.app, { method: 'GET', url }, owner, stranger)
      await expectHiddenFromOtherAccounts(
        t.app,
        { method: 'GET', url: `${url}/attachments/0` },
        owner,
        stranger,
      )
    }
    const theirs = await get(t, stranger, '')
    expect(theirs.json()).toMatchObject({ data: [], pagination: { total: 0 } })
    const byContact = await get(t, stranger, `?contact_id=${contactId}`)
    expect(byContact.json().pagination.total).toBe(0)
    const mine = await get(t, owner, `?contact_id=${contactId}`)
    expect(mine.json().data.map((c: { _id: string }) => c._id)).toEqual([record.id])
  })

  test('requires a bearer token', async ({ t }) => {
    const id = newId()
    for (const url of [
      '/v1/e/mailprovider/communications',
      `/v1/integrations/mailprovider/communications/${id}`,
      `/v1/e/mailprovider/communications/${id}/attachments/0`,
    ]) {
      expect((await t.app.inject({ url })).statusCode).toBe(401)
    }
  })
})
