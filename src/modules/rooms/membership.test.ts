import { and, count, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { describe, expect } from 'vitest'
import { addUser, type Tenant } from '../../../test/helpers/fixtures.js'
import { type CreatedRoom, createGroup, roomCall } from '../../../test/helpers/rooms.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import { OWNER_NOT_REMOVABLE, OWNER_ROLE_UNCHANGEABLE } from './membership.service.js'
import { roomMemberHistory, roomMembers, roomMessages, rooms } from './tables.js'

/** Four colleagues of the owner's account, named so that system messages read clearly. */
const test = base.extend('crew', { scope: 'file' }, async ({ t, owner }) => ({
  ann: await addUser(t.app, owner.accountId, 'Ann'),
  bob: await addUser(t.app, owner.accountId, 'Bob'),
  cy: await addUser(t.app, owner.accountId, 'Cy'),
  dee: await addUser(t.app, owner.accountId, 'Dee'),
}))

/** The room as its members see it, through the list (one of the member's rooms). */
async function seen(app: FastifyInstance, member: Tenant, roomId: string) {
  const rooms = (await roomCall(app, member, 'GET', '/?limit=100')).json().rooms as {
    _id: string
    owner: string
    members: { conversation_id: string; role: string }[]
    last_message: { content: string } | null
  }[]
  return rooms.find((room) => room._id === roomId)
}

const rolesIn = async (app: FastifyInstance, member: Tenant, roomId: string) =>
  Object.fromEntries(
    ((await seen(app, member, roomId))?.members ?? []).map((m) => [m.conversation_id, m.role]),
  )

async function messageCount(app: FastifyInstance, roomId: string) {
  const [row] = await app.platform.db
    .select({ n: count() })
    .from(roomMessages)
    .where(eq(roomMessages.roomId, roomId))
  return row?.n
}

/** Adds members one request at a time, so that each joins after the one before. */
async function addInTurn(app: FastifyInstance, by: Tenant, room: CreatedRoom, members: Tenant[]) {
  for (const member of members) {
    const added = await roomCall(app, by, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [member.conversationId],
    })
    expect(added.statusCode).toBe(200)
  }
}

const makeAdmin = (app: FastifyInstance, by: Tenant, room: CreatedRoom, member: Tenant) =>
  roomCall(app, by, 'PATCH', '/role', {
    roomId: room._id,
    conversationId: member.conversationId,
    role: 'admin',
  })

describe('leave', () => {
  test('a member leaves: a system message, and all_members keeps the stay with its end', async ({
    t,
    owner,
    crew: { ann, bob },
  }) => {
    const room = await createGroup(t.app, owner, [ann, bob], { name: 'Leaving' })
    const left = await roomCall(t.app, ann, 'POST', `/${room._id}/leave`)
    expect(left.json()).toEqual({
      success: true,
      room: {
        _id: room._id,
        name: 'Leaving',
        members: [owner, bob].map((m) => ({
          conversation_id: m.conversationId,
          joined_at: expect.any(String),
        })),
      },
    })
    expect((await seen(t.app, bob, room._id))?.last_message?.content).toBe('Ann left the room')
    expect(await seen(t.app, ann, room._id)).toBeUndefined()
    const again = await roomCall(t.app, ann, 'POST', `/${room._id}/leave`)
    expect(again.json()).toMatchObject({ errno: 400, message: 'Cannot access this room' })
    // Rejoining opens a new stay.
    await addInTurn(t.app, owner, room, [ann])
    const readded = await roomCall(t.app, owner, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [bob.conversationId],
    })
    const annStays = readded
      .json()
      .room.all_members.filter(
        (stay: { conversation_id: string }) => stay.conversation_id === ann.conversationId,
      )
    expect(annStays).toEqual([
      { conversation_id: ann.conversationId, joined_at: expect.any(String), left_at: expect.any(String) },
      { conversation_id: ann.conversationId, joined_at: expect.any(String) },
    ])
  })

  test('an owner who leaves is succeeded by the admin who joined first', async ({ t, owner, crew }) => {
    const { ann, bob, cy } = crew
    const room = await createGroup(t.app, owner, [ann])
    await addInTurn(t.app, owner, room, [bob, cy])
    // Cy is made admin before Bob, but Bob joined first.
    await makeAdmin(t.app, owner, room, cy)
    await makeAdmin(t.app, owner, room, bob)
    await roomCall(t.app, owner, 'POST', `/${room._id}/leave`)
    const view = await seen(t.app, ann, room._id)
    expect(view?.owner).toBe(bob.conversationId)
    expect(await rolesIn(t.app, ann, room._id)).toEqual({
      [ann.conversationId]: 'member',
      [bob.conversationId]: 'owner',
      [cy.conversationId]: 'admin',
    })
    expect(view?.last_message?.content).toBe('Bob is now the owner')
  })

  test('with no admin, the member who joined first becomes owner', async ({
    t,
    owner,
    crew: { ann, bob, cy },
  }) => {
    const room = await createGroup(t.app, owner, [])
    await addInTurn(t.app, owner, room, [cy, ann, bob])
    await roomCall(t.app, owner, 'POST', `/${room._id}/leave`)
    expect((await seen(t.app, ann, room._id))?.owner).toBe(cy.conversationId)
    expect(await rolesIn(t.app, ann, room._id)).toMatchObject({ [cy.conversationId]: 'owner' })
  })

  test('the last one out deletes the room', async ({ t, owner }) => {
    const room = await createGroup(t.app, owner, [], { name: 'Alone' })
    const left = await roomCall(t.app, owner, 'POST', `/${room._id}/leave`)
    expect(left.json()).toEqual({ success: true, room: { _id: room._id, name: 'Alone', members: [] } })
    const [stored] = await t.app.platform.db.select({ n: count() }).from(rooms).where(eq(rooms.id, room._id))
    expect(stored?.n).toBe(0)
  })

  test('every group room keeps exactly one owner when the owner and the only admin leave at once', async ({
    t,
    owner,
    crew: { ann, bob, cy },
  }) => {
    for (let round = 0; round < 5; round++) {
      const room = await createGroup(t.app, owner, [ann])
      await addInTurn(t.app, owner, room, [bob, cy])
      await makeAdmin(t.app, owner, room, bob)
      const [ownerLeft, adminLeft] = await Promise.all([
        roomCall(t.app, owner, 'POST', `/${room._id}/leave`),
        roomCall(t.app, bob, 'POST', `/${room._id}/leave`),
      ])
      expect([ownerLeft.statusCode, adminLeft.statusCode]).toEqual([200, 200])
      const members = await t.app.platform.db
        .select({ conversationId: roomMembers.conversationId, role: roomMembers.role })
        .from(roomMembers)
        .where(eq(roomMembers.roomId, room._id))
      const owners = members.filter((m) => m.role === 'owner')
      expect(owners).toEqual([{ conversationId: ann.conversationId, role: 'owner' }])
      expect((await seen(t.app, cy, room._id))?.owner).toBe(ann.conversationId)
    }
  })
})

describe('add members', () => {
  test('adds as members with a system message; members already there add no row and no message', async ({
    t,
    owner,
    crew: { ann, bob, cy },
  }) => {
    const room = await createGroup(t.app, owner, [ann])
    const added = await roomCall(t.app, owner, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [bob.conversationId, ann.conversationId, cy.conversationId, bob.conversationId],
    })
    expect(added.statusCode).toBe(200)
    expect(added.json().success).toBe(true)
    expect(added.json().room.roles).toEqual([
      { conversation_id: owner.conversationId, type: 'owner' },
      { conversation_id: ann.conversationId, type: 'member' },
      { conversation_id: bob.conversationId, type: 'member' },
      { conversation_id: cy.conversationId, type: 'member' },
    ])
    expect(added.json().room.last_message.content).toBe('Ada Lovelace added Bob, Cy')
    const messages = await messageCount(t.app, room._id)
    const again = await roomCall(t.app, owner, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [ann.conversationId, bob.conversationId],
    })
    expect(again.statusCode).toBe(200)
    expect(again.json().room.members).toEqual(added.json().room.members)
    expect(again.json().room.all_members).toEqual(added.json().room.all_members)
    expect(await messageCount(t.app, room._id)).toBe(messages)
    const [rows] = await t.app.platform.db
      .select({ n: count() })
      .from(roomMemberHistory)
      .where(
        and(eq(roomMemberHistory.roomId, room._id), eq(roomMemberHistory.conversationId, bob.conversationId)),
      )
    expect(rows?.n).toBe(1)
  })

  test("refuses another account's, unknown and malformed ids, naming them; nothing is added", async ({
    t,
    owner,
    stranger,
    crew: { ann, bob },
  }) => {
    const room = await createGroup(t.app, owner, [ann])
    for (const bad of [stranger.conversationId, 'eeeeeeeeeeeeeeeeeeeeeeee', 'nope']) {
      const response = await roomCall(t.app, owner, 'POST', '/members', {
        roomId: room._id,
        conversation_ids: [bob.conversationId, bad],
      })
      expect(response.json()).toMatchObject({
        errno: 400,
        message: `conversation_ids: ${bad} is not a chat identity of this account`,
      })
    }
    expect(Object.keys(await rolesIn(t.app, owner, room._id))).toHaveLength(2)
  })
})

describe('owner and roles', () => {
  test('the owner hands the room to a member and becomes a member', async ({
    t,
    owner,
    crew: { ann, bob },
  }) => {
    const room = await createGroup(t.app, owner, [ann])
    const notMember = await roomCall(t.app, owner, 'PATCH', '/owner', {
      roomId: room._id,
      conversationId: bob.conversationId,
    })
    expect(notMember.json()).toMatchObject({
      errno: 400,
      message: `${bob.conversationId} is not a member of this room`,
    })
    const changed = await roomCall(t.app, owner, 'PATCH', '/owner', {
      roomId: room._id,
      conversationId: ann.conversationId,
    })
    expect(changed.json()).toEqual({ success: true, message: 'Owner changed' })
    const view = await seen(t.app, ann, room._id)
    expect(view?.owner).toBe(ann.conversationId)
    expect(await rolesIn(t.app, ann, room._id)).toEqual({
      [owner.conversationId]: 'member',
      [ann.conversationId]: 'owner',
    })
    expect(view?.last_message?.content).toBe('Ada Lovelace made Ann the owner')
  })

  test("roles change between admin and member with a system message; the owner's never", async ({
    t,
    owner,
    crew: { ann, bob },
  }) => {
    const room = await createGroup(t.app, owner, [ann, bob])
    const changed = await makeAdmin(t.app, owner, room, ann)
    expect(changed.json()).toEqual({ success: true, message: 'Role changed' })
    expect((await seen(t.app, bob, room._id))?.last_message?.content).toBe('Ada Lovelace made Ann an admin')
    const messages = await messageCount(t.app, room._id)
    // The same role again changes nothing.
    expect((await makeAdmin(t.app, owner, room, ann)).statusCode).toBe(200)
    expect(await messageCount(t.app, room._id)).toBe(messages)
    const demoted = await roomCall(t.app, ann, 'PATCH', '/role', {
      roomId: room._id,
      conversationId: ann.conversationId,
      role: 'member',
    })
    expect(demoted.statusCode).toBe(200)
    const ofOwner = await makeAdmin(t.app, owner, room, owner)
    expect(ofOwner.json()).toMatchObject({ errno: 400, message: OWNER_ROLE_UNCHANGEABLE })
    const toOwner = await roomCall(t.app, owner, 'PATCH', '/role', {
      roomId: room._id,
      conversationId: bob.conversationId,
      role: 'owner',
    })
    expect(toOwner.json()).toMatchObject({ errno: 400, message: 'role must be one of: admin, member' })
    expect(await rolesIn(t.app, owner, room._id)).toEqual({
      [owner.conversationId]: 'owner',
      [ann.conversationId]: 'member',
      [bob.conversationId]: 'member',
    })
  })
})

describe('remove member', () => {
  test('removes with a system message, recorded in all_members; never the owner', async ({
    t,
    owner,
    crew: { ann, bob, dee },
  }) => {
    const room = await createGroup(t.app, owner, [ann, bob], { admins: [ann] })
    const removed = await roomCall(
      t.app,
      ann,
      'DELETE',
      `/${room._id}/member?conversation_id=${bob.conversationId}`,
    )
    expect(removed.statusCode).toBe(200)
    const { room: after } = removed.json()
    expect(after.members.map((m: { conversation_id: string }) => m.conversation_id)).toEqual([
      owner.conversationId,
      ann.conversationId,
    ])
    expect(after.all_members).toContainEqual({
      conversation_id: bob.conversationId,
      joined_at: expect.any(String),
      left_at: expect.any(String),
    })
    expect(after.last_message.content).toBe('Ann removed Bob')
    const ofOwner = await roomCall(
      t.app,
      ann,
      'DELETE',
      `/${room._id}/member?conversation_id=${owner.conversationId}`,
    )
    expect(ofOwner.json()).toMatchObject({ errno: 400, message: OWNER_NOT_REMOVABLE })
    const notMember = await roomCall(
      t.app,
      ann,
      'DELETE',
      `/${room._id}/member?conversation_id=${dee.conversationId}`,
    )
    expect(notMember.json()).toMatchObject({
      errno: 400,
      message: `${dee.conversationId} is not a member of this room`,
    })
  })
})
