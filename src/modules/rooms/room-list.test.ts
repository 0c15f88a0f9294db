import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { addUser, type Tenant } from '../../../test/helpers/fixtures.js'
import { createDirect, createGroup, roomCall } from '../../../test/helpers/rooms.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP, PAGE_REACH } from '../../platform/db/page.js'

const ids = (response: { json(): { rooms: { _id: string }[] } }) =>
  response.json().rooms.map((room) => room._id)

/** A fresh user of the owner's account, so that its rooms are only those a test makes. */
const newcomer = (t: { app: Parameters<typeof addUser>[0] }, owner: Tenant, name: string) =>
  addUser(t.app, owner.accountId, name)

describe('room list', () => {
  test('items carry members with their users and roles, last message, unread count, favorite, dates', async ({
    t,
    owner,
  }) => {
    const lin = await newcomer(t, owner, 'Lin Items')
    const max = await newcomer(t, owner, 'Max Items')
    const room = await createGroup(t.app, lin, [max], { name: 'Items', admins: [max] })
    await roomCall(t.app, max, 'PATCH', '/', { roomId: room._id, name: 'Items!' })
    const response = await roomCall(t.app, lin, 'GET', '/')
    expect(response.statusCode).toBe(200)
    const user = (name: string) => ({ name, email: expect.stringContaining('@example.com'), avatar: '' })
    expect(response.json()).toEqual({
      rooms: [
        {
          _id: room._id,
          type: 'group',
          name: 'Items!',
          owner: lin.conversationId,
          members: [
            { conversation_id: lin.conversationId, user: user('Lin Items'), role: 'owner' },
            { conversation_id: max.conversationId, user: user('Max Items'), role: 'admin' },
          ],
          last_message: {
            content: 'Max Items renamed the room to "Items!"',
            created_at: expect.any(String),
            sender_id: max.conversationId,
          },
          last_activity: expect.any(String),
          unread_count: 1,
          is_favorite: false,
          snoozed_until: null,
          created_at: room.members[0]?.joined_at,
          updated_at: expect.any(String),
        },
      ],
      pagination: { page: 1, limit: 20, total: 1, pages: 1 },
    })
    // One's own messages are not unread: Lin made Max an admin, then Max renamed; one unread each.
    const maxView = (await roomCall(t.app, max, 'GET', '/')).json().rooms[0]
    expect(maxView.unread_count).toBe(1)
  })

  test('pages of 20 by default, most recent activity first; limit up to 100', async ({ t, owner }) => {
    const pat = await newcomer(t, owner, 'Pat Pages')
    const made: string[] = []
    for (let i = 0; i < 23; i++) made.push((await createGroup(t.app, pat, [], { name: `Page ${i}` }))._id)
    const newestFirst = [...made].reverse()
    const first = await roomCall(t.app, pat, 'GET', '/')
    expect(first.json().pagination).toEqual({ page: 1, limit: 20, total: 23, pages: 2 })
    expect(ids(first)).toEqual(newestFirst.slice(0, 20))
    const second = await roomCall(t.app, pat, 'GET', '/?page=2')
    expect(ids(second)).toEqual(newestFirst.slice(20))
    // Activity moves a room to the top.
    await roomCall(t.app, pat, 'PATCH', '/', { roomId: made[0], name: 'Oldest, now active' })
    const small = await roomCall(t.app, pat, 'GET', '/?limit=5&page=1')
    expect(small.json().pagination).toEqual({ page: 1, limit: 5, total: 23, pages: 5 })
    expect(ids(small)).toEqual([made[0], ...newestFirst.slice(0, 4)])
    expect((await roomCall(t.app, pat, 'GET', '/?limit=100')).json().rooms).toHaveLength(23)
    const tooMany = await roomCall(t.app, pat, 'GET', '/?limit=101')
    expect(tooMany.json()).toMatchObject({ errno: 400, message: 'limit must be <= 100' })
    // A page past the end is empty and still tells the total; so does a filter that keeps nothing.
    const pastTheEnd = await roomCall(t.app, pat, 'GET', '/?page=3')
    expect(pastTheEnd.json()).toEqual({
      rooms: [],
      pagination: { page: 3, limit: 20, total: 23, pages: 2 },
    })
    const noFavorites = await roomCall(t.app, pat, 'GET', '/?status=favorites')
    expect(noFavorites.json().pagination).toEqual({ page: 1, limit: 20, total: 0, pages: 0 })
  })

  test('status: all, unread, favorites, snoozed; type: direct or group', async ({ t, owner }) => {
    const sam = await newcomer(t, owner, 'Sam Status')
    const kim = await newcomer(t, owner, 'Kim Status')
    const quiet = await createGroup(t.app, kim, [sam], { name: 'Quiet' })
    const busy = await createGroup(t.app, kim, [sam], { name: 'Busy' })
    const direct = await createDirect(t.app, kim, sam)
    await roomCall(t.app, kim, 'PATCH', '/', { roomId: busy._id, name: 'Busy, renamed' })
    await roomCall(t.app, sam, 'POST', `/${quiet._id}/favorite`)
    await roomCall(t.app, sam, 'POST', `/${direct._id}/snooze`, { preset: '8h' })
    const list = async (query: string) => ids(await roomCall(t.app, sam, 'GET', `/${query}`))
    expect(await list('')).toEqual([busy._id, direct._id, quiet._id])
    expect(await list('?status=all')).toEqual([busy._id, direct._id, quiet._id])
    expect(await list('?status=unread')).toEqual([busy._id])
    expect(await list('?status=favorites')).toEqual([quiet._id])
    expect(await list('?status=snoozed')).toEqual([direct._id])
    expect(await list('?type=direct')).toEqual([direct._id])
    expect(await list('?type=group&status=unread')).toEqual([busy._id])
    // Kim renamed: nothing is unread for Kim, and Kim's favorites and snoozes are Kim's own.
    const kimList = async (query: string) => ids(await roomCall(t.app, kim, 'GET', `/${query}`))
    expect(await kimList('?status=unread')).toEqual([])
    expect(await kimList('?status=favorites')).toEqual([])
    expect(await kimList('?status=snoozed')).toEqual([])
    const wrong = await roomCall(t.app, sam, 'GET', '/?status=archived')
    expect(wrong.json()).toMatchObject({
      errno: 400,
      message: 'status must be one of: all, unread, favorites, snoozed',
    })
  })

  test("search matches room names and the other members' names, in any case", async ({ t, owner }) => {
    const sue = await newcomer(t, owner, 'Sue Searcher')
    const zed = await newcomer(t, owner, 'Zed Quorra')
    const plain = await newcomer(t, owner, 'Plain Person')
    const named = await createGroup(t.app, sue, [plain], { name: 'Quarterly Planning' })
    const withZed = await createGroup(t.app, sue, [zed], { name: 'Misc' })
    const direct = await createDirect(t.app, sue, zed)
    await createGroup(t.app, sue, [plain], { name: '100% done' })
    const search = async (text: string) =>
      ids(await roomCall(t.app, sue, 'GET', `/?search=${encodeURIComponent(text)}`))
    expect(await search('quarterly')).toEqual([named._id])
    expect(await search('QUORRA')).toEqual([direct._id, withZed._id])
    // "Qu" is in a room name and in a member's name.
    expect(await search('qu')).toEqual([direct._id, withZed._id, named._id])
    // The caller's own name matches nothing: every room has the caller.
    expect(await search('Searcher')).toEqual([])
    // LIKE's wildcards are taken literally.
    expect(await search('0%')).toHaveLength(1)
    expect(await search('_')).toEqual([])
    const found = await roomCall(t.app, sue, 'GET', '/?search=quorra&type=group')
    expect(found.json()).toMatchObject({ rooms: [{ _id: withZed._id }], pagination: { total: 1 } })
  })

  test("unread counts: a new member starts with nothing unread; others' messages count, one's own do not", async ({
    t,
    owner,
  }) => {
    const una = await newcomer(t, owner, 'Una Unread')
    const late = await newcomer(t, owner, 'Late Joiner')
    const room = await createGroup(t.app, una, [], { name: 'Before' })
    for (const name of ['One', 'Two', 'Three'])
      await roomCall(t.app, una, 'PATCH', '/', { roomId: room._id, name })
    await roomCall(t.app, una, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [late.conversationId],
    })
    const unread = async (tenant: Tenant) =>
      (await roomCall(t.app, tenant, 'GET', '/')).json().rooms[0].unread_count
    expect(await unread(late)).toBe(0)
    expect(await unread(una)).toBe(0)
    await roomCall(t.app, una, 'PATCH', '/', { roomId: room._id, name: 'After' })
    expect(await unread(late)).toBe(1)
    await roomCall(t.app, una, 'PATCH', '/role', {
      roomId: room._id,
      conversationId: late.conversationId,
      role: 'admin',
    })
    await roomCall(t.app, late, 'PATCH', '/', { roomId: room._id, name: 'By the late joiner' })
    expect(await unread(late)).toBe(2)
    expect(await unread(una)).toBe(1)
  })

  test(`counts a member's rooms up to ${LIST_TOTAL_CAP}, saying so beyond; pages go on to ${PAGE_REACH} rows`, async ({
    t,
    owner,
  }) => {
    const crowded = await newcomer(t, owner, 'Cy Crowded')
    // Written in one statement: group rooms the newcomer owns, with their memberships.
    await t.app.platform.db.execute(sql`
      with made as (
        insert into rooms (id, account_id, type, name, owner_id)
        select 'c0' || lpad(to_hex(n), 22, '0'), ${owner.accountId}, 'group', 'Crowd ' || n,
          ${crowded.conversationId}
        from generate_series(1, ${LIST_TOTAL_CAP + 1}) as n
        returning id
      )
      insert into room_members (account_id, room_id, conversation_id, role)
      select ${owner.accountId}, id, ${crowded.conversationId}, 'owner' from made`)
    const first = await roomCall(t.app, crowded, 'GET', '/?limit=100')
    expect(first.json().pagination).toStrictEqual({
      total: LIST_TOTAL_CAP,
      page: 1,
      limit: 100,
      pages: 10,
      total_exact: false,
    })
    // The pages past the count are answered: the 1,001st room is on the 11th.
    const past = (await roomCall(t.app, crowded, 'GET', '/?limit=100&page=11')).json()
    expect(past.rooms).toHaveLength(1)
    expect(past.pagination).toMatchObject({ total: LIST_TOTAL_CAP, page: 11, total_exact: false })
    const beyond = await roomCall(t.app, crowded, 'GET', '/?limit=100&page=101')
    expect(beyond.statusCode).toBe(400)
    expect(beyond.json().message).toBe(
      'page must be <= 100 with limit 100 (pages reach the first 10000 rows)',
    )
  })
})
