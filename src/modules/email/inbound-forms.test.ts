import { randomBytes } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { contactsWithEmail, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  headerText,
  INBOUND_PATH,
  inboundRecords as inboundRecordsOf,
  mimeReply,
  postInbound,
  rawMultipart,
  rawReplyForm,
  replyForm,
  sentEmail as sentEmailOf,
  supportMessagesOf,
  supportThreadsOf,
} from '../../../test/helpers/inbound-email.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { findSupportMessageOfCommunication } from '../support/support.service.js'

test.override('appEnv', { MAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'SG.parent-key' })

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** Inbound replies: charsets and attachments, tenancy, and the forms refused. */
describe('inbound reply webhook forms', () => {
  const db = (t: TestApp) => t.database.handle.db
  const post = (t: TestApp, form: Parameters<typeof postInbound>[1], prefix?: string) =>
    postInbound(t.app, form, prefix)
  const sentEmail = (t: TestApp, tenant: Tenant) => sentEmailOf(db(t), tenant)
  const inboundRecords = (t: TestApp, accountId: string) => inboundRecordsOf(db(t), accountId)
  const contactsOf = (t: TestApp, tenant: Tenant, email: string) => contactsWithEmail(t.app, tenant, email)

  test('decodes fields in the charsets SendGrid names and stores attachments', async ({
    t,
    owner: agency,
    subAccount: client,
  }) => {
    const original = await sentEmail(t, client)
    const latin1 = (text: string) => Buffer.from(text, 'latin1')
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(64)])
    const utf8 = (name: string, text: string) => ({ name, value: Buffer.from(text) })
    const messageId = `latin-${hex(4)}@x.example`
    const body = rawMultipart([
      utf8('headers', headerText({ messageId, inReplyTo: original.msgId })),
      utf8('from', '"Jos\u00e9 Mu\u00f1oz" <jose@example.com>'),
      utf8('to', 'replies@agency.example.com'),
      { name: 'subject', value: latin1('R\u00e9ponse \u00e0 votre devis') },
      { name: 'text', value: latin1('Merci, \u00e7a marche tr\u00e8s bien.') },
      utf8('envelope', '{"to":["replies@agency.example.com"],"from":"jose@example.com"}'),
      utf8(
        'charsets',
        '{"to":"UTF-8","from":"UTF-8","subject":"iso-8859-1","text":"iso-8859-1","headers":"UTF-8"}',
      ),
      utf8('attachments', '1'),
      utf8('attachment-info', '{"attachment1":{"filename":"devis sign\u00e9.pdf","type":"application/pdf"}}'),
      { name: 'attachment1', value: pdf, file: { filename: 'devis.pdf', type: 'application/pdf' } },
    ])
    const response = await post(t, body)
    expect(response.statusCode).toBe(200)

    const record = (await inboundRecords(t, client.accountId)).find((r) => r.msgId === messageId)
    expect(record).toMatchObject({
      subject: 'R\u00e9ponse \u00e0 votre devis',
      text: 'Merci, \u00e7a marche tr\u00e8s bien.',
      html: '',
    })
    expect(record?.attachments).toEqual([
      expect.objectContaining({
        file_name: 'devis sign\u00e9.pdf',
        type: 'application/pdf',
        size: pdf.length,
      }),
    ])
    const stored = await t.app.platform.storage.get(record?.attachments[0]?.key as string)
    expect(stored?.equals(pdf)).toBe(true)
    const [contact] = await contactsOf(t, agency, 'jose@example.com')
    expect(contact?.name).toBe('Jos\u00e9 Mu\u00f1oz')
    const message = (await supportMessagesOf(db(t), client.accountId)).find((m) => m.msg_id === messageId)
    expect(message?.content).toBe('Merci, \u00e7a marche tr\u00e8s bien.')
    expect(message?.attachments).toEqual(record?.attachments)
  })

  test('keeps a reply only in the account of the original; without a parent the contact is its own', async ({
    t,
    owner: agency,
    subAccount: client,
    stranger,
  }) => {
    const original = await sentEmail(t, stranger)
    const response = await post(
      t,
      replyForm({ messageId: `own-${hex(4)}@x.example`, inReplyTo: original.msgId, from: 'sam@example.com' }),
    )
    expect(response.statusCode).toBe(200)
    const [contact] = await contactsOf(t, stranger, 'sam@example.com')
    expect(contact).toMatchObject({ name: '' })
    expect(await contactsOf(t, agency, 'sam@example.com')).toEqual([])
    const records = await inboundRecords(t, stranger.accountId)
    expect(records).toEqual([expect.objectContaining({ referenceId: original.msgId })])
    expect((await inboundRecords(t, client.accountId)).some((r) => r.referenceId === original.msgId)).toBe(
      false,
    )
    // The stranger has no email inbox: the room is in none.
    const rooms = (await supportThreadsOf(db(t), stranger.accountId)).map((thread) => thread.room)
    expect(rooms).toEqual([expect.objectContaining({ inbox_id: null, participants: [contact?._id] })])
    // Nothing of the stranger's reply reached the other tenants' support messages.
    const reply = records[0]?.id as string
    expect(await findSupportMessageOfCommunication(db(t), stranger.accountId, reply)).not.toBeNull()
    for (const other of [agency, client]) {
      expect(await findSupportMessageOfCommunication(db(t), other.accountId, reply)).toBeNull()
    }
    expect(await supportMessagesOf(db(t), stranger.accountId)).toHaveLength(2)
  })

  test('reads the "send raw" form with mailparser: encoded words, charsets, parts and attachments', async ({
    t,
    owner: agency,
    subAccount: client,
  }) => {
    const original = await sentEmail(t, client)
    const messageId = `raw-${hex(4)}@mail.example.de`
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(64)])
    const response = await post(t, rawReplyForm(mimeReply({ messageId, inReplyTo: original.msgId, pdf })))
    expect(response.statusCode).toBe(200)

    const base = '/v1/e/mailprovider/communications'
    const get = (url: string) => t.app.inject({ url, headers: client.headers })
    const list = await get(`${base}?type=INCOMING&limit=100`)
    const record = list.json().data.find((r: { msgID: string }) => r.msgID === messageId)
    expect(record).toMatchObject({
      referenceID: original.msgId,
      from: '"M\u00fcller, J\u00fcrgen" <juergen@example.de>',
      to: ['replies@agency.example.com'],
      subject: 'Re: Ihr Angebot f\u00fcr M\u00fcnchen',
      html: '<p>Danke, das passt so.</p>',
      attachments: [
        expect.objectContaining({ file_name: 'Angebot.pdf', type: 'application/pdf', size: pdf.length }),
      ],
    })
    expect(record.text).toContain('Gr\u00fc\u00dfe, J\u00fcrgen')
    const file = await get(`${base}/${record._id}/attachments/0`)
    expect(file.statusCode).toBe(200)
    expect(file.headers['content-type']).toBe('application/pdf')
    expect(file.headers['content-disposition']).toBe('attachment; filename="Angebot.pdf"')
    expect(file.rawPayload.equals(pdf)).toBe(true)
    // The sender's name, decoded from the encoded word, on the contact the parent account keeps.
    const contact = await t.app.inject({
      url: `/v1/contacts/${record.contact_id[0]}`,
      headers: agency.headers,
    })
    expect(contact.json().data).toMatchObject({
      email: 'juergen@example.de',
      name: 'M\u00fcller, J\u00fcrgen',
    })
  })

  test('refuses a raw form whose email is no MIME message, or one without a sender', async ({ t }) => {
    const garbage = await post(t, rawReplyForm(Buffer.from('this is not a message at all')))
    expect(garbage.statusCode).toBe(400)
    expect(garbage.json().message).toBe('email must be a MIME message')
    const noFrom = await post(
      t,
      rawReplyForm(Buffer.from('Subject: hi\r\nTo: replies@agency.example.com\r\n\r\nhi')),
    )
    expect(noFrom.statusCode).toBe(400)
    expect(noFrom.json().message).toBe('from is required')
  })

  test('takes the same fields as a JSON object', async ({ t, subAccount: client }) => {
    const original = await sentEmail(t, client)
    const reply = { messageId: `json-${hex(6)}@example.com`, inReplyTo: `${original.msgId}@sendgrid.net` }
    const response = await t.app.inject({
      method: 'POST',
      url: `/v1/e${INBOUND_PATH}`,
      payload: {
        headers: headerText(reply),
        from: 'Jane Doe <jane@example.com>',
        to: 'replies@agency.example.com',
        subject: 'Re: Your quote – ok',
        text: 'Grüße',
        envelope: { from: 'jane@example.com', to: ['replies@agency.example.com'] },
        charsets: { text: 'iso-8859-1' },
      },
    })
    expect(response.statusCode).toBe(200)
    expect(await inboundRecords(t, client.accountId)).toContainEqual(
      expect.objectContaining({
        msgId: reply.messageId,
        referenceId: reply.inReplyTo,
        subject: 'Re: Your quote – ok',
        text: 'Grüße',
      }),
    )
  })

  test('takes a reply of 2 MB as SendGrid posts it (multipart), and JSON only up to 1 MB', async ({ t }) => {
    const long = 'x'.repeat(2 * 1024 * 1024)
    const form = replyForm({ inReplyTo: 'unknown@example.com' })
    form.set('text', long)
    expect((await post(t, form)).statusCode).toBe(200)
    const json = await t.app.inject({
      method: 'POST',
      url: `/v1/e${INBOUND_PATH}`,
      payload: { from: 'jane@example.com', text: long },
    })
    expect(json.statusCode).toBe(413)
    expect(json.json()).toMatchObject({ success: false, errno: 413 })
  })

  test('refuses a reply without a sender, naming the field, one past 30 MB and one neither form nor object', async ({
    t,
  }) => {
    const noSender = replyForm({ inReplyTo: 'x@y' })
    noSender.set('from', ' ')
    const answer = await post(t, noSender)
    expect(answer.statusCode).toBe(400)
    expect(answer.json().message).toBe('from is required')

    // Past 30 MB in all (multipart streams around Fastify's body limit, so the reader counts).
    const big = replyForm({ inReplyTo: 'x@y' })
    big.append('attachment1', new Blob([Buffer.alloc(30 * 1024 * 1024 + 1)]), 'big.bin')
    const tooLarge = await post(t, big)
    expect(tooLarge.statusCode).toBe(413)
    expect(tooLarge.json()).toMatchObject({ success: false, errno: 413 })

    const json = await t.app.inject({
      method: 'POST',
      url: `/v1/e${INBOUND_PATH}`,
      headers: { 'content-type': 'application/json' },
      payload: '["a@b.c"]',
    })
    expect(json.json()).toMatchObject({
      errno: 400,
      message: 'The body must be multipart/form-data or a JSON object',
    })
  })
})
