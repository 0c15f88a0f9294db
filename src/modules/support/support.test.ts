import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import {
  addSupportMessage,
  closeSupportConversation,
  EMAIL_INBOX_TYPE,
  findSupportMessageOfCommunication,
  listSupportRoomMessages,
  openConversationFor,
  roomForConversation,
} from './support.service.js'

describe('support inbox', () => {
  const db = (t: TestApp) => t.database.handle.db
  const createInbox = (t: TestApp, accountId: string, payload: object) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${accountId}/support-inboxes`,
      headers: adminHeaders,
      payload,
    })

  test('creates inboxes through the admin API; a new default replaces the previous one', async ({
    t,
    owner,
  }) => {
    const first = await createInbox(t, owner.accountId, {
      type: 'email_inbound',
      name: 'Sales',
      is_default: true,
    })
    expect(first.statusCode).toBe(200)
    expect(first.json()).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: { account_id: owner.accountId, type: 'email_inbound', name: 'Sales', is_default: true },
    })
    const second = await createInbox(t, owner.accountId, {
      type: 'email_inbound',
      name: 'Support',
      is_default: true,
    })
    expect(second.statusCode).toBe(200)

    const conversation = await openConversationFor(db(t), owner.accountId, newId(), 'Hello')
    const room = await roomForConversation(db(t), owner.accountId, {
      conversationId: conversation._id,
      participants: [conversation.contact_id],
      inboxType: EMAIL_INBOX_TYPE,
    })
    expect(room.inbox_id).toBe(second.json().data._id)
  })

  test('refuses a bad body, an unknown account and a missing admin token', async ({ t, owner }) => {
    const bad = await createInbox(t, owner.accountId, { type: 'Email Inbound!', name: 'x' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('type')
    const unknown = await createInbox(t, newId(), { type: 'email_inbound', name: 'x' })
    expect(unknown.statusCode).toBe(404)
    const anonymous = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/support-inboxes`,
      headers: owner.headers,
      payload: { type: 'email_inbound', name: 'x' },
    })
    expect(anonymous.statusCode).toBe(401)
  })

  test('keeps one open conversation and one room per contact, a new one once closed', async ({
    t,
    owner,
    stranger,
  }) => {
    const contactId = newId()
    const first = await openConversationFor(db(t), owner.accountId, contactId, 'Question')
    expect(await openConversationFor(db(t), owner.accountId, contactId, 'Other')).toEqual(first)
    const room = await roomForConversation(db(t), owner.accountId, {
      conversationId: first._id,
      participants: [contactId],
      inboxType: 'no_such_type',
    })
    expect(room).toMatchObject({ inbox_id: null, participants: [contactId] })
    expect(
      await roomForConversation(db(t), owner.accountId, {
        conversationId: first._id,
        participants: [],
        inboxType: EMAIL_INBOX_TYPE,
      }),
    ).toEqual(room)

    await closeSupportConversation(db(t), owner.accountId, first._id)
    const next = await openConversationFor(db(t), owner.accountId, contactId, 'Again')
    expect(next._id).not.toBe(first._id)
    expect(next).toMatchObject({ subject: 'Again', is_open: true })
    // The same contact id in another account is another conversation.
    const elsewhere = await openConversationFor(db(t), stranger.accountId, contactId, 'Question')
    expect(elsewhere._id).not.toBe(next._id)
  })

  test('makes one message per communication, visible only in its account', async ({ t, owner, stranger }) => {
    const conversation = await openConversationFor(db(t), owner.accountId, newId(), 'Msgs')
    const room = await roomForConversation(db(t), owner.accountId, {
      conversationId: conversation._id,
      participants: [],
      inboxType: EMAIL_INBOX_TYPE,
    })
    const communicationId = newId()
    const input = {
      roomId: room._id,
      conversationId: conversation._id,
      direction: 'INCOMING' as const,
      content: '<p>hi</p>',
      communicationId,
      msgId: 'm@x',
    }
    const first = await addSupportMessage(db(t), owner.accountId, input)
    expect(first.created).toBe(true)
    const again = await addSupportMessage(db(t), owner.accountId, { ...input, content: 'changed' })
    expect(again).toEqual({ message: first.message, created: false })
    expect(await listSupportRoomMessages(db(t), owner.accountId, room._id)).toEqual([first.message])

    expect(await findSupportMessageOfCommunication(db(t), owner.accountId, communicationId)).toEqual(
      first.message,
    )
    expect(await findSupportMessageOfCommunication(db(t), stranger.accountId, communicationId)).toBeNull()
    expect(await listSupportRoomMessages(db(t), stranger.accountId, room._id)).toEqual([])
  })
})
