import { randomBytes } from 'node:crypto'
import { describe, expect, vi } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { contactsWithEmail, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  inboundRecords as inboundRecordsOf,
  postInbound,
  replyForm,
  sentEmail as sentEmailOf,
  supportMessagesOf,
  supportThreadsOf,
} from '../../../test/helpers/inbound-email.js'
import { randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { listSupportRoomMessages } from '../support/support.service.js'

test.override('appEnv', ({ socketService }) => ({
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: 'SG.parent-key',
  CONVERSATION_SOCKET_URL: socketService.url,
}))

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

describe('inbound reply webhook', () => {
  let inboxId: string
  const announced: RecordChange[] = []

  test.beforeAll(async ({ t, subAccount: client }) => {
    t.app.platform.changes.listen(async (_tx, change) => {
      announced.push(change)
    })
    const inbox = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${client.accountId}/support-inboxes`,
      headers: adminHeaders,
      payload: { type: 'email_inbound', name: 'Replies', is_default: true },
    })
    inboxId = inbox.json().data._id
  })

  const db = (t: TestApp) => t.database.handle.db

  const post = (t: TestApp, form: Parameters<typeof postInbound>[1], prefix?: string) =>
    postInbound(t.app, form, prefix)
  const sentEmail = (t: TestApp, tenant: Tenant) => sentEmailOf(db(t), tenant)

  const inboundRecords = (t: TestApp, accountId: string) => inboundRecordsOf(db(t), accountId)
  const contactsOf = (t: TestApp, tenant: Tenant, email: string) => contactsWithEmail(t.app, tenant, email)

  test('runs the nine steps for a reply to a sent email', async ({
    t,
    socketService,
    owner: agency,
    subAccount: client,
  }) => {
    const original = await sentEmail(t, client)
    const replyId = `reply-${hex(4)}@mail.example.com`
    const response = await post(
      t,
      replyForm({ messageId: replyId, inReplyTo: original.msgId }),
      '/v1/integrations',
    )
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })

    // Step 3: the contact lives under the parent account, named from the text before the brackets.
    const [contact] = await contactsOf(t, agency, 'jane@example.com')
    expect(contact).toMatchObject({ name: 'Jane Doe' })
    expect(await contactsOf(t, client, 'jane@example.com')).toEqual([])
    // A new contact is announced, so that apps authorized in the account hear of it.
    expect(announced).toEqual([
      expect.objectContaining({
        event: 'contact.created',
        account_id: agency.accountId,
        data: expect.objectContaining({ _id: contact?._id, email: 'jane@example.com' }),
      }),
    ])

    // Step 4: an open conversation of the original's account with the subject.
    const conversations = await supportThreadsOf(db(t), client.accountId)
    expect(conversations).toEqual([
      expect.objectContaining({ contact_id: contact?._id, subject: 'Re: Your quote', is_open: true }),
    ])

    // Step 5: the room, with the contact, in the account's default email inbox.
    expect(conversations[0]?.room).toEqual(
      expect.objectContaining({
        conversation_id: conversations[0]?._id,
        participants: [contact?._id],
        inbox_id: inboxId,
      }),
    )
    const roomId = conversations[0]?.room?._id as string

    // Step 7: the INCOMING record.
    const [record] = await inboundRecords(t, client.accountId)
    expect(record).toMatchObject({
      module: 'SENDGRID',
      success: true,
      fromAddress: '"Jane Doe" <jane@example.com>',
      toAddresses: ['replies@agency.example.com'],
      subject: 'Re: Your quote',
      html: '<p>Thanks, that works for me.</p>',
      text: 'Thanks, that works for me.',
      msgId: replyId,
      referenceId: original.msgId,
      contactIds: [contact?._id],
    })

    // Step 6: the original as OUTGOING, then the reply as INCOMING (its html).
    const messages = await listSupportRoomMessages(db(t), client.accountId, roomId)
    expect(messages).toEqual([
      expect.objectContaining({
        direction: 'OUTGOING',
        content: '<p>Here is your quote</p>',
        communication_id: original.id,
        msg_id: original.msgId,
      }),
      expect.objectContaining({
        direction: 'INCOMING',
        content: '<p>Thanks, that works for me.</p>',
        communication_id: record?.id,
        msg_id: replyId,
      }),
    ])

    // Step 9: the sender of the original joins the room, and the message is announced.
    await vi.waitFor(() => {
      expect(socketService.emitted()).toContainEqual({
        account_id: client.accountId,
        event: 'joinRoom',
        data: { roomId, userId: client.userId },
      })
      expect(socketService.emitted()).toContainEqual({
        account_id: client.accountId,
        event: 'message',
        data: { support_message_id: messages[1]?._id, room_id: roomId },
      })
    })

    // Delivery events, rule 3: an `open` of the original acknowledges its support message.
    const open = await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/webhook',
      payload: [
        {
          email: 'jane@example.com',
          timestamp: Math.floor(Date.now() / 1000),
          event: 'open',
          sg_event_id: `ev-${hex(8)}`,
          sg_message_id: `${original.msgId}.filterdrecv-5645d9c87f-78xgx-1-64F9A3B1-2.0`,
        },
      ],
    })
    expect(open.statusCode).toBe(200)
    await vi.waitFor(
      () =>
        expect(socketService.emitted()).toContainEqual({
          account_id: client.accountId,
          event: 'supportMessageAck',
          data: { roomId, messageId: messages[0]?._id },
        }),
      { timeout: 15_000, interval: 100 },
    )
  })

  test('threads a later reply by References into the same conversation and room, text when no html', async ({
    t,
    owner: agency,
    subAccount: client,
  }) => {
    const original = await sentEmail(t, client)
    const first = await post(t, replyForm({ messageId: `r1-${hex(4)}@x.example`, inReplyTo: original.msgId }))
    expect(first.statusCode).toBe(200)
    const second = await post(
      t,
      replyForm({
        messageId: `r2-${hex(4)}@x.example`,
        references: `<unrelated@x.example>\r\n <${original.msgId}>`,
        html: '',
        text: 'One more question.',
      }),
    )
    expect(second.statusCode).toBe(200)

    const [contact] = await contactsOf(t, agency, 'jane@example.com')
    const conversations = await supportThreadsOf(db(t), client.accountId, contact?._id)
    expect(conversations).toHaveLength(1)
    const room = conversations[0]?.room
    const messages = await listSupportRoomMessages(db(t), client.accountId, room?._id as string)
    // The original of this test shows once, however many replies it gets.
    expect(messages.filter((m) => m.communication_id === original.id)).toHaveLength(1)
    expect(messages.at(-1)).toMatchObject({ direction: 'INCOMING', content: 'One more question.' })
    const records = await inboundRecords(t, client.accountId)
    expect(records.find((r) => r.text === 'One more question.')?.referenceId).toBe(original.msgId)
  })

  test('stores a redelivered reply (same Message-ID) once', async ({ t, subAccount: client }) => {
    const original = await sentEmail(t, client)
    const reply = replyForm({ messageId: `dup-${hex(4)}@x.example`, inReplyTo: original.msgId })
    const before = (await supportMessagesOf(db(t), client.accountId)).length
    const answers = await Promise.all([post(t, reply), post(t, reply), post(t, reply)])
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200])
    const records = (await inboundRecords(t, client.accountId)).filter(
      (r) => r.referenceId === original.msgId,
    )
    expect(records).toHaveLength(1)
    // The OUTGOING original and one INCOMING reply.
    expect(await supportMessagesOf(db(t), client.accountId)).toHaveLength(before + 2)
  })

  // A Message-ID or a sender address of 3,000 characters failed the reply's insert on an index: a 500.
  test('keeps a reply with a Message-ID longer than kept, without it; drops one from an address no SMTP carries', async ({
    t,
    subAccount: client,
  }) => {
    const original = await sentEmail(t, client)
    const longId = replyForm({
      messageId: `${randomText(3_000)}@x.example`,
      inReplyTo: original.msgId,
      text: 'Id',
    })
    expect((await post(t, longId)).statusCode).toBe(200)
    const from = `Long <${randomText(3_000)}@example.com>`
    const longSender = replyForm({ inReplyTo: original.msgId, from, text: 'Sender' })
    expect((await post(t, longSender)).statusCode).toBe(200)
    const records = await inboundRecords(t, client.accountId)
    expect(records.filter((r) => r.text === 'Id')).toMatchObject([
      { msgId: null, referenceId: original.msgId },
    ])
    expect(records.filter((r) => r.text === 'Sender')).toEqual([])
  })

  test('answers 200 to a reply to an unknown message and keeps nothing', async ({
    t,
    owner: agency,
    subAccount: client,
    stranger,
  }) => {
    const before = {
      records: (await inboundRecords(t, client.accountId)).length,
      conversations: (await supportThreadsOf(db(t), agency.accountId)).length,
    }
    const response = await post(
      t,
      replyForm({
        messageId: `lost-${hex(4)}@x.example`,
        inReplyTo: 'never-sent@x.example',
        from: 'Nobody <nobody@example.com>',
      }),
    )
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    for (const tenant of [agency, client, stranger]) {
      expect(await contactsOf(t, tenant, 'nobody@example.com')).toEqual([])
    }
    expect((await inboundRecords(t, client.accountId)).length).toBe(before.records)
    expect(await supportThreadsOf(db(t), agency.accountId)).toHaveLength(before.conversations)
  })
})
