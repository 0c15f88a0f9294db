import { and, count, eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { bearer } from '../../../test/helpers/app.js'
import { addUser, anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import { createGroup, ROOMS, roomCall } from '../../../test/helpers/rooms.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import type { Database } from '../../platform/db/connection.js'
import { roomMessages, rooms } from './tables.js'

const test = base.extend('colleagues', { scope: 'file' }, async ({ t, owner }) => ({
  ada: await addUser(t.app, owner.accountId, 'Ada Byron'),
  grace: await addUser(t.app, owner.accountId, 'Grace Hopper'),
}))

const TIME = expect.stringMatching(/^\d{4}-\d\d-\d\dT/)

async function roomsOfAccount(db: Database, accountId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(rooms).where(eq(rooms.accountId, accountId))
  return row?.n ?? 0
}

describe('create', () => {
  test('a group room: the creator owns it, the others are members, ids deduplicated', async ({
    t,
    owner,
    colleagues: { ada, grace },
  }) => {
    const response = await roomCall(t.app, owner, 'POST', '/', {
      type: 'group',
      room_name: '  Launch  ',
      conversation_ids: [ada.conversationId, grace.conversationId, ada.conversationId, owner.conversationId],
    })
    expect(response.statusCode).toBe(201)
    const room = response.json()
    expect(room).toEqual({
      _id: anId,
      type: 'group',
      name: 'Launch',
      owner: owner.conversationId,
      roles: [
        { conversation_id: owner.conversationId, type: 'owner' },
        { conversation_id: ada.conversationId, type: 'member' },
        { conversation_id: grace.conversationId, type: 'member' },
      ],
      members: [owner, ada, grace].map((m) => ({ conversation_id: m.conversationId, joined_at: TIME })),
      all_members: [owner, ada, grace].map((m) => ({ conversation_id: m.conversationId, joined_at: TIME })),
      last_message: null,
      last_activity: TIME,
      account_id: owner.accountId,
      created_at: TIME,
      updated_at: TIME,
    })
    // A group room is always new, even with the same people and name.
    const again = await roomCall(t.app, owner, 'POST', '/', {
      type: 'group',
      room_name: 'Launch',
      conversation_ids: [ada.conversationId, grace.conversationId],
    })
    expect(again.statusCode).toBe(201)
    expect(again.json()._id).not.toBe(room._id)
  })

  test('a group room needs a name', async ({ t, owner, colleagues: { ada } }) => {
    for (const room_name of [undefined, '   ']) {
      const response = await roomCall(t.app, owner, 'POST', '/', {
        type: 'group',
        room_name,
        conversation_ids: [ada.conversationId],
      })
      expect(response.json()).toMatchObject({ errno: 400, message: 'room_name is required for group rooms' })
    }
  })

  test('a direct room exists once per pair: asking again, from either side, returns it (200)', async ({
    t,
    owner,
  }) => {
    const other = await addUser(t.app, owner.accountId, 'Direct Partner')
    const created = await roomCall(t.app, owner, 'POST', '/', {
      type: 'direct',
      conversation_ids: [other.conversationId, owner.conversationId],
      room_name: 'ignored',
    })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({
      type: 'direct',
      name: null,
      owner: owner.conversationId,
      roles: [
        { conversation_id: owner.conversationId, type: 'owner' },
        { conversation_id: other.conversationId, type: 'member' },
      ],
    })
    const fromOther = await roomCall(t.app, other, 'POST', '/', {
      type: 'direct',
      conversation_ids: [owner.conversationId],
    })
    expect(fromOther.statusCode).toBe(200)
    expect(fromOther.json()).toEqual(created.json())
  })

  test('a direct room needs exactly one other member', async ({ t, owner, colleagues: { ada, grace } }) => {
    for (const ids of [[], [owner.conversationId], [ada.conversationId, grace.conversationId]]) {
      const response = await roomCall(t.app, owner, 'POST', '/', { type: 'direct', conversation_ids: ids })
      expect(response.json()).toMatchObject({
        errno: 400,
        message: 'conversation_ids must hold exactly one other member for a direct room',
      })
    }
  })

  test('concurrent creations of one direct room make one room', async ({ t, owner }) => {
    const other = await addUser(t.app, owner.accountId, 'Concurrent Partner')
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? roomCall(t.app, owner, 'POST', '/', { type: 'direct', conversation_ids: [other.conversationId] })
          : roomCall(t.app, other, 'POST', '/', { type: 'direct', conversation_ids: [owner.conversationId] }),
      ),
    )
    expect(new Set(responses.map((r) => r.json()._id)).size).toBe(1)
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201])
    const pair = [owner.conversationId, other.conversationId].sort().join(':')
    const [stored] = await t.app.platform.db
      .select({ n: count() })
      .from(rooms)
      .where(and(eq(rooms.accountId, owner.accountId), eq(rooms.directPair, pair)))
    expect(stored?.n).toBe(1)
  })

  test("refuses another account's, unknown and malformed ids with a 400 naming them; nothing is created", async ({
    t,
    owner,
    stranger,
    colleagues: { ada },
  }) => {
    const before = await roomsOfAccount(t.app.platform.db, owner.accountId)
    for (const bad of [stranger.conversationId, 'ffffffffffffffffffffffff', 'not-an-id']) {
      for (const type of ['group', 'direct']) {
        const response = await roomCall(t.app, owner, 'POST', '/', {
          type,
          room_name: 'Never',
          conversation_ids: type === 'group' ? [ada.conversationId, bad] : [bad],
        })
        expect(response.statusCode).toBe(400)
        expect(response.json()).toEqual({
          success: false,
          errno: 400,
          message: `conversation_ids: ${bad} is not a chat identity of this account`,
          additional_info: { conversation_ids: [bad] },
        })
      }
    }
    expect(await roomsOfAccount(t.app.platform.db, owner.accountId)).toBe(before)
  })

  test('validates the body, naming the field', async ({ t, owner }) => {
    const wrongType = await roomCall(t.app, owner, 'POST', '/', { type: 'channel', conversation_ids: [] })
    expect(wrongType.json().message).toBe('type must be one of: direct, group')
    const noIds = await roomCall(t.app, owner, 'POST', '/', { type: 'group', room_name: 'x' })
    expect(noIds.json().message).toBe('conversation_ids is required')
  })
})

describe('access', () => {
  test('a token without a chat identity (conversation.id) is refused with 401, as is no token', async ({
    t,
    owner,
  }) => {
    const token = await t.app.platform.tokens.sign(
      { uid: owner.userId, account_id: owner.accountId, parent_account: null },
      300,
    )
    for (const [method, url] of [
      ['GET', ROOMS],
      ['POST', ROOMS],
      ['GET', `${ROOMS}/favorites`],
      ['PATCH', `${ROOMS}/role`],
    ] as const) {
      const withoutIdentity = await t.app.inject({ method, url, headers: bearer(token), payload: {} })
      expect(withoutIdentity.statusCode, `${method} ${url}`).toBe(401)
      expect(withoutIdentity.json()).toMatchObject({ success: false, errno: 401 })
      expect((await t.app.inject({ method, url, payload: {} })).statusCode).toBe(401)
    }
  })

  test("another account's room is answered 404 Room does not exist, never 403", async ({
    t,
    owner,
    stranger,
    colleagues: { ada },
  }) => {
    const room = await createGroup(t.app, owner, [ada])
    for (const call of [
      { method: 'POST' as const, url: `${ROOMS}/${room._id}/favorite` },
      { method: 'POST' as const, url: `${ROOMS}/${room._id}/snooze`, payload: { preset: '30m' } },
      { method: 'PATCH' as const, url: ROOMS, payload: { roomId: room._id, name: 'Renamed' } },
      {
        method: 'PATCH' as const,
        url: `${ROOMS}/role`,
        payload: { roomId: room._id, conversationId: ada.conversationId, role: 'admin' },
      },
      { method: 'DELETE' as const, url: `${ROOMS}/${room._id}/member?conversation_id=${ada.conversationId}` },
      { method: 'DELETE' as const, url: `${ROOMS}?roomId=${room._id}` },
    ]) {
      await expectHiddenFromOtherAccounts(t.app, call, owner, stranger)
    }
    const unknown = await roomCall(t.app, owner, 'POST', '/ffffffffffffffffffffffff/favorite')
    expect(unknown.json()).toMatchObject({ errno: 404, message: 'Room does not exist' })
  })
})

describe('favorites', () => {
  test('the toggle adds and removes; the list holds favorites, most recent activity first', async ({
    t,
    owner,
  }) => {
    const fan = await addUser(t.app, owner.accountId, 'Fan')
    const first = await createGroup(t.app, owner, [fan], { name: 'First' })
    const second = await createGroup(t.app, owner, [fan], { name: 'Second' })
    await createGroup(t.app, owner, [fan], { name: 'Not a favorite' })
    for (const room of [first, second]) {
      const toggled = await roomCall(t.app, fan, 'POST', `/${room._id}/favorite`)
      expect(toggled.json()).toEqual({
        success: true,
        room: { _id: room._id, name: room.name, is_favorite: true },
      })
    }
    // Activity in the first room brings it to the top.
    await roomCall(t.app, owner, 'PATCH', '/', { roomId: first._id, name: 'First, renamed' })
    const favorites = await roomCall(t.app, fan, 'GET', '/favorites')
    expect(favorites.json()).toEqual({
      favorites: [
        {
          _id: first._id,
          name: 'First, renamed',
          type: 'group',
          last_message: {
            content: 'Ada Lovelace renamed the room to "First, renamed"',
            created_at: TIME,
            sender_id: owner.conversationId,
          },
          unread_count: 1,
        },
        { _id: second._id, name: 'Second', type: 'group', last_message: null, unread_count: 0 },
      ],
    })
    // Favorites are each member's own.
    expect((await roomCall(t.app, owner, 'GET', '/favorites')).json()).toEqual({ favorites: [] })
    const untoggled = await roomCall(t.app, fan, 'POST', `/${first._id}/favorite`)
    expect(untoggled.json().room.is_favorite).toBe(false)
    const left = (await roomCall(t.app, fan, 'GET', '/favorites')).json().favorites
    expect(left.map((room: { _id: string }) => room._id)).toEqual([second._id])
  })
})

describe('rename', () => {
  test('renames with a system message; the name is trimmed and must not be blank', async ({
    t,
    owner,
    colleagues: { ada },
  }) => {
    const room = await createGroup(t.app, owner, [ada], { name: 'Old' })
    const renamed = await roomCall(t.app, owner, 'PATCH', '/', { roomId: room._id, name: '  New name ' })
    expect(renamed.json()).toEqual({
      success: true,
      room: { _id: room._id, name: 'New name', updated_at: TIME },
    })
    const listed = (await roomCall(t.app, ada, 'GET', '/?search=New%20name')).json().rooms[0]
    expect(listed).toMatchObject({
      name: 'New name',
      last_message: {
        content: 'Ada Lovelace renamed the room to "New name"',
        sender_id: owner.conversationId,
      },
    })
    const blank = await roomCall(t.app, owner, 'PATCH', '/', { roomId: room._id, name: '   ' })
    expect(blank.json()).toMatchObject({ errno: 400, message: 'name must not be empty' })
    const missing = await roomCall(t.app, owner, 'PATCH', '/', { roomId: room._id })
    expect(missing.json()).toMatchObject({ errno: 400, message: 'name is required' })
  })
})

describe('delete', () => {
  test('removes the room with its messages; it is gone for everyone', async ({
    t,
    owner,
    colleagues: { ada },
  }) => {
    const room = await createGroup(t.app, owner, [ada])
    await roomCall(t.app, owner, 'PATCH', '/', { roomId: room._id, name: 'About to go' })
    const messages = () =>
      t.app.platform.db.select({ n: count() }).from(roomMessages).where(eq(roomMessages.roomId, room._id))
    expect((await messages())[0]?.n).toBe(1)
    const deleted = await roomCall(t.app, owner, 'DELETE', `/?roomId=${room._id}`)
    expect(deleted.json()).toEqual({ success: true, message: 'Room deleted successfully' })
    expect((await messages())[0]?.n).toBe(0)
    const list = (await roomCall(t.app, ada, 'GET', '/?limit=100')).json().rooms
    expect(list.map((r: { _id: string }) => r._id)).not.toContain(room._id)
    const again = await roomCall(t.app, owner, 'DELETE', `/?roomId=${room._id}`)
    expect(again.json()).toMatchObject({ errno: 404, message: 'Room does not exist' })
  })
})

describe('snooze', () => {
  test('presets of 30 minutes, 1, 8 and 24 hours from now', async ({ t, owner, colleagues: { ada } }) => {
    const room = await createGroup(t.app, owner, [ada])
    for (const [preset, minutes] of [
      ['30m', 30],
      ['1h', 60],
      ['8h', 480],
      ['24h', 1440],
    ] as const) {
      const before = Date.now()
      const response = await roomCall(t.app, ada, 'POST', `/${room._id}/snooze`, { preset })
      expect(response.statusCode).toBe(200)
      const { room: snoozed } = response.json()
      expect(snoozed._id).toBe(room._id)
      expect(snoozed.snoozed_until.conversation_id).toBe(ada.conversationId)
      expect(snoozed.snoozed_until.time).toBeGreaterThanOrEqual(before + minutes * 60_000)
      expect(snoozed.snoozed_until.time).toBeLessThanOrEqual(Date.now() + minutes * 60_000)
    }
  })

  test('a custom time in Unix milliseconds, which must be in the future', async ({
    t,
    owner,
    colleagues: { ada },
  }) => {
    const room = await createGroup(t.app, owner, [ada])
    const time = Date.now() + 3 * 24 * 3_600_000
    const response = await roomCall(t.app, ada, 'POST', `/${room._id}/snooze`, { time })
    expect(response.json()).toEqual({
      success: true,
      room: { _id: room._id, snoozed_until: { conversation_id: ada.conversationId, time } },
    })
    const listed = (await roomCall(t.app, ada, 'GET', '/?status=snoozed')).json().rooms
    expect(listed.find((r: { _id: string }) => r._id === room._id)).toMatchObject({ snoozed_until: time })
    const refusals = [
      [{ time: Date.now() - 1000 }, 'time must be in the future'],
      [{}, 'time or preset is required'],
      [{ time, preset: '1h' }, 'Give time or preset, not both'],
      [{ preset: '2h' }, 'preset must be one of: 30m, 1h, 8h, 24h'],
    ] as const
    for (const [body, message] of refusals) {
      const refused = await roomCall(t.app, ada, 'POST', `/${room._id}/snooze`, body)
      expect(refused.json(), message).toMatchObject({ errno: 400, message })
    }
  })
})
