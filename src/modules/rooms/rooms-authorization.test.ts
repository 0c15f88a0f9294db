import { asc, count, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { describe, expect } from 'vitest'
import { addUser, type Tenant } from '../../../test/helpers/fixtures.js'
import { type CreatedRoom, createDirect, createGroup, roomCall } from '../../../test/helpers/rooms.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import type { Database } from '../../platform/db/connection.js'
import {
  CANNOT_ADD_TO_DIRECT,
  CANNOT_LEAVE_DIRECT,
  CANNOT_REMOVE_FROM_DIRECT,
  ONLY_ADMINS_CAN_ADD,
  ONLY_OWNER_CAN_TRANSFER,
  ONLY_OWNER_OR_ADMIN_CAN_CHANGE_ROLES,
  ONLY_OWNER_OR_ADMIN_CAN_REMOVE,
} from './membership.service.js'
import { CANNOT_ACCESS_THIS_ROOM, ROOM_DOES_NOT_EXIST } from './room-access.service.js'
import {
  CANNOT_DELETE_DIRECT,
  CANNOT_RENAME_DIRECT,
  ONLY_OWNER_CAN_DELETE,
  ONLY_OWNER_OR_ADMIN_CAN_RENAME,
} from './rooms.service.js'
import { roomMemberHistory, roomMembers, roomMessages, rooms } from './tables.js'

type Role = 'owner' | 'admin' | 'member' | 'nonMember' | 'stranger'

/** A room under test: who holds which role in it, and an identity of the account that is not in it. */
interface Scene {
  room: CreatedRoom
  people: Partial<Record<Role, Tenant>>
  outsider: Tenant
}

const test = base.extend('colleagues', { scope: 'file' }, async ({ t, owner }) => ({
  admin: await addUser(t.app, owner.accountId, 'Grace Admin'),
  member: await addUser(t.app, owner.accountId, 'Alan Member'),
  nonMember: await addUser(t.app, owner.accountId, 'Nora Outside'),
  outsider: await addUser(t.app, owner.accountId, 'Otto Added'),
}))

/** The plain member the actor acts on: another member than the actor. */
const targetOf = (scene: Scene, actor: Role) =>
  (actor === 'member' ? (scene.people.admin ?? scene.people.owner) : scene.people.member) as Tenant

type Action = (app: FastifyInstance, scene: Scene, actor: Role, caller: Tenant) => ReturnType<typeof roomCall>

const ACTIONS: Record<string, Action> = {
  favorite: (app, { room }, _actor, caller) => roomCall(app, caller, 'POST', `/${room._id}/favorite`),
  snooze: (app, { room }, _actor, caller) =>
    roomCall(app, caller, 'POST', `/${room._id}/snooze`, { preset: '1h' }),
  rename: (app, { room }, _actor, caller) =>
    roomCall(app, caller, 'PATCH', '/', { roomId: room._id, name: 'Renamed' }),
  add: (app, { room, outsider }, _actor, caller) =>
    roomCall(app, caller, 'POST', '/members', {
      roomId: room._id,
      conversation_ids: [outsider.conversationId],
    }),
  role: (app, scene, actor, caller) =>
    roomCall(app, caller, 'PATCH', '/role', {
      roomId: scene.room._id,
      conversationId: targetOf(scene, actor).conversationId,
      role: 'admin',
    }),
  owner: (app, scene, actor, caller) =>
    roomCall(app, caller, 'PATCH', '/owner', {
      roomId: scene.room._id,
      conversationId: targetOf(scene, actor).conversationId,
    }),
  remove: (app, scene, actor, caller) =>
    roomCall(
      app,
      caller,
      'DELETE',
      `/${scene.room._id}/member?conversation_id=${targetOf(scene, actor).conversationId}`,
    ),
  leave: (app, { room }, _actor, caller) => roomCall(app, caller, 'POST', `/${room._id}/leave`),
  delete: (app, { room }, _actor, caller) => roomCall(app, caller, 'DELETE', `/?roomId=${room._id}`),
}

type Outcome = { status: number; message?: string; body?: object }
const OK: Outcome = { status: 200 }
const refused = (status: number, message: string): Outcome => ({ status, message })
const EVERY_MEMBER_OK = { owner: OK, admin: OK, member: OK }

/** The spec's outcome for each action and role of a member; non-members and other accounts are below. */
const GROUP: Record<string, Partial<Record<Role, Outcome>>> = {
  favorite: EVERY_MEMBER_OK,
  snooze: EVERY_MEMBER_OK,
  rename: { owner: OK, admin: OK, member: refused(403, ONLY_OWNER_OR_ADMIN_CAN_RENAME) },
  add: { owner: OK, admin: OK, member: refused(403, ONLY_ADMINS_CAN_ADD) },
  role: { owner: OK, admin: OK, member: refused(403, ONLY_OWNER_OR_ADMIN_CAN_CHANGE_ROLES) },
  owner: {
    owner: OK,
    admin: refused(403, ONLY_OWNER_CAN_TRANSFER),
    member: refused(403, ONLY_OWNER_CAN_TRANSFER),
  },
  remove: {
    owner: OK,
    admin: OK,
    member: { status: 403, body: { error: ONLY_OWNER_OR_ADMIN_CAN_REMOVE, statusCode: 403 } },
  },
  leave: EVERY_MEMBER_OK,
  delete: {
    owner: OK,
    admin: refused(403, ONLY_OWNER_CAN_DELETE),
    member: refused(403, ONLY_OWNER_CAN_DELETE),
  },
}

const bothRefused = (message: string) => ({ owner: refused(400, message), member: refused(400, message) })
const DIRECT: Record<string, Partial<Record<Role, Outcome>>> = {
  favorite: { owner: OK, member: OK },
  snooze: { owner: OK, member: OK },
  rename: bothRefused(CANNOT_RENAME_DIRECT),
  add: bothRefused(CANNOT_ADD_TO_DIRECT),
  role: { owner: OK, member: refused(403, ONLY_OWNER_OR_ADMIN_CAN_CHANGE_ROLES) },
  owner: { owner: OK, member: refused(403, ONLY_OWNER_CAN_TRANSFER) },
  remove: bothRefused(CANNOT_REMOVE_FROM_DIRECT),
  leave: bothRefused(CANNOT_LEAVE_DIRECT),
  delete: bothRefused(CANNOT_DELETE_DIRECT),
}

const OUTSIDERS: Record<'nonMember' | 'stranger', Outcome> = {
  nonMember: refused(400, CANNOT_ACCESS_THIS_ROOM),
  stranger: refused(404, ROOM_DOES_NOT_EXIST),
}

/** Everything stored about the room, to show that a refused action changed nothing. */
async function roomState(db: Database, roomId: string) {
  const [room] = await db.select().from(rooms).where(eq(rooms.id, roomId))
  const members = await db
    .select()
    .from(roomMembers)
    .where(eq(roomMembers.roomId, roomId))
    .orderBy(asc(roomMembers.conversationId))
  const stays = await db
    .select()
    .from(roomMemberHistory)
    .where(eq(roomMemberHistory.roomId, roomId))
    .orderBy(asc(roomMemberHistory.id))
  const [messages] = await db.select({ n: count() }).from(roomMessages).where(eq(roomMessages.roomId, roomId))
  return { room, members, stays, messages: messages?.n }
}

async function expectOutcome(
  app: FastifyInstance,
  scene: Scene,
  action: string,
  actor: Role,
  caller: Tenant,
  expected: Outcome,
) {
  const before = await roomState(app.platform.db, scene.room._id)
  const response = await (ACTIONS[action] as Action)(app, scene, actor, caller)
  const label = `${action} by ${actor} in a ${scene.room.type} room: ${response.body}`
  expect(response.statusCode, label).toBe(expected.status)
  if (expected.body) expect(response.json(), label).toEqual(expected.body)
  if (expected.message)
    expect(response.json(), label).toMatchObject({ errno: expected.status, message: expected.message })
  if (expected.status !== 200) expect(await roomState(app.platform.db, scene.room._id), label).toEqual(before)
}

describe('authorization matrix: every action × role × room type', () => {
  for (const [action, outcomes] of Object.entries(GROUP)) {
    for (const actor of ['owner', 'admin', 'member', 'nonMember', 'stranger'] as const) {
      const expected = outcomes[actor] ?? OUTSIDERS[actor as keyof typeof OUTSIDERS]
      test(`group room: ${action} by ${actor} → ${expected.status}`, async ({
        t,
        owner,
        stranger,
        colleagues,
      }) => {
        const { admin, member, nonMember, outsider } = colleagues
        const room = await createGroup(t.app, owner, [admin, member], { admins: [admin] })
        const people = { owner, admin, member, nonMember, stranger }
        await expectOutcome(t.app, { room, people, outsider }, action, actor, people[actor], expected)
      })
    }
  }

  for (const [action, outcomes] of Object.entries(DIRECT)) {
    for (const actor of ['owner', 'member', 'nonMember', 'stranger'] as const) {
      const expected = outcomes[actor] ?? OUTSIDERS[actor as keyof typeof OUTSIDERS]
      test(`direct room: ${action} by ${actor} → ${expected.status}`, async ({
        t,
        owner,
        stranger,
        colleagues,
      }) => {
        // A fresh partner each time: the direct room of a pair is one room, and some actions change it.
        const partner = await addUser(t.app, owner.accountId, 'Dora Direct')
        const room = await createDirect(t.app, owner, partner)
        const people = { owner, member: partner, nonMember: colleagues.nonMember, stranger }
        await expectOutcome(
          t.app,
          { room, people, outsider: colleagues.outsider },
          action,
          actor,
          people[actor],
          expected,
        )
      })
    }
  }

  test('the room list shows a room to its members only', async ({ t, owner, stranger, colleagues }) => {
    const { admin, member, nonMember } = colleagues
    const room = await createGroup(t.app, owner, [admin, member], {
      admins: [admin],
      name: 'Listed only to members',
    })
    const listed = async (tenant: Tenant) =>
      (await roomCall(t.app, tenant, 'GET', '/?limit=100')).json().rooms.map((r: { _id: string }) => r._id)
    for (const tenant of [owner, admin, member]) expect(await listed(tenant)).toContain(room._id)
    for (const tenant of [nonMember, stranger]) expect(await listed(tenant)).not.toContain(room._id)
  })
})
