import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { findRecipientContacts } from './contacts.service.js'
import {
  findOpenProspectConversation,
  getProspectConversation,
  openProspectConversation,
  recordEmailFromUser,
  recordProspectActivity,
} from './prospect-conversations.service.js'

describe('prospect conversations', () => {
  let contactId: string
  let colleagueId: string
  test.beforeAll(async ({ t, owner }) => {
    const contact = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/contacts`,
      headers: adminHeaders,
      payload: { email: 'lead@example.com' },
    })
    contactId = contact.json().data._id
    const colleague = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/users',
      headers: adminHeaders,
      payload: {
        email: 'colleague@example.com',
        password: 'long enough',
        name: 'Col',
        account_id: owner.accountId,
      },
    })
    colleagueId = colleague.json().data._id
  })

  test('opens one conversation per contact and channel, and reuses the open one', async ({ t, owner }) => {
    const { db } = t.app.platform
    const input = {
      contact_id: contactId,
      channel: 'email',
      title: 'Quote',
      member_user_ids: [owner.userId, colleagueId],
    }
    const first = await openProspectConversation(db, owner.accountId, input)
    expect(first.created).toBe(true)
    expect(first.conversation).toMatchObject({
      contact_id: contactId,
      channel: 'email',
      is_open: true,
      title: 'Quote',
    })
    expect(first.conversation.members).toHaveLength(2)
    const again = await openProspectConversation(db, owner.accountId, input)
    expect(again).toMatchObject({ created: false, conversation: { _id: first.conversation._id } })
    const sms = await openProspectConversation(db, owner.accountId, { ...input, channel: 'sms' })
    expect(sms.conversation._id).not.toBe(first.conversation._id)
    expect((await findOpenProspectConversation(db, owner.accountId, contactId, 'email'))?._id).toBe(
      first.conversation._id,
    )
  })

  test('counts unread messages for every member but the author', async ({ t, owner }) => {
    const { db } = t.app.platform
    const { conversation } = await openProspectConversation(db, owner.accountId, {
      contact_id: contactId,
      channel: 'chat',
      member_user_ids: [owner.userId, colleagueId],
    })
    await recordProspectActivity(db, owner.accountId, conversation._id)
    const after = await recordProspectActivity(db, owner.accountId, conversation._id, owner.userId)
    const unread = Object.fromEntries(after.members.map((m) => [m.user_id, m.unread_count]))
    expect(unread).toEqual({ [owner.userId]: 1, [colleagueId]: 2 })
    expect(Date.parse(after.last_activity)).toBeGreaterThanOrEqual(Date.parse(conversation.last_activity))
  })

  test('records email from a user: they follow the thread with one more unread message', async ({
    t,
    owner,
    stranger,
  }) => {
    const { db } = t.app.platform
    const { conversation } = await openProspectConversation(db, owner.accountId, {
      contact_id: contactId,
      channel: 'prospect',
      member_user_ids: [],
    })
    await recordEmailFromUser(db, owner.accountId, conversation._id, owner.userId)
    const after = await recordEmailFromUser(db, owner.accountId, conversation._id, owner.userId)
    expect(after.members).toEqual([{ user_id: owner.userId, unread_count: 2 }])
    await expect(recordEmailFromUser(db, owner.accountId, conversation._id, stranger.userId)).rejects.toThrow(
      'User is not a member of this account',
    )
    await expect(
      recordEmailFromUser(db, stranger.accountId, conversation._id, stranger.userId),
    ).rejects.toThrow('Conversation not found')
  })

  test('finds the contacts of recipients by recipient_id or email, once each, in order', async ({
    t,
    owner,
    stranger,
  }) => {
    const { db } = t.app.platform
    const other = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/contacts`,
      headers: adminHeaders,
      payload: { email: 'second@example.com', name: 'Second' },
    })
    const secondId = other.json().data._id
    const found = await findRecipientContacts(db, owner.accountId, [
      { email: 'SECOND@example.com' },
      { email: 'changed-address@example.com', recipient_id: contactId },
      { email: 'lead@example.com' },
      { email: 'nobody@example.com' },
    ])
    expect(found.map((c) => c._id)).toEqual([secondId, contactId])
    expect(
      await findRecipientContacts(db, stranger.accountId, [
        { email: 'lead@example.com', recipient_id: contactId },
      ]),
    ).toEqual([])
  })

  test('keeps conversations inside their account', async ({ t, owner, stranger }) => {
    const { db } = t.app.platform
    const { conversation } = await openProspectConversation(db, owner.accountId, {
      contact_id: contactId,
      channel: 'whatsapp',
      member_user_ids: [],
    })
    await expect(getProspectConversation(db, stranger.accountId, conversation._id)).rejects.toThrow(
      'Conversation not found',
    )
    await expect(recordProspectActivity(db, stranger.accountId, conversation._id)).rejects.toThrow(
      'Conversation not found',
    )
    await expect(
      openProspectConversation(db, stranger.accountId, {
        contact_id: contactId,
        channel: 'email',
        member_user_ids: [],
      }),
    ).rejects.toThrow('Contact not found')
    await expect(
      openProspectConversation(db, owner.accountId, {
        contact_id: contactId,
        channel: 'fax',
        member_user_ids: [stranger.userId],
      }),
    ).rejects.toThrow('User is not a member of this account')
  })
})
