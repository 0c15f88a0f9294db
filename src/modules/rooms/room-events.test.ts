import { describe, expect } from 'vitest'
import { addUser, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  createDirect,
  createGroup,
  postMessage,
  recordRoomEvents,
  roomCall,
} from '../../../test/helpers/rooms.js'
import { test as base } from '../../../test/helpers/tenant-test.js'

const delivered = recordRoomEvents()

const test = base.extend('crew', { scope: 'file' }, async ({ t, owner }) => ({
  ann: await addUser(t.app, owner.accountId, 'Ann'),
  bob: await addUser(t.app, owner.accountId, 'Bob'),
  cy: await addUser(t.app, owner.accountId, 'Cy'),
  outsider: await addUser(t.app, owner.accountId, 'Outsider'),
}))

// The events also leave for the conversation socket service (its fake here), queued in the write.
test.override('appEnv', ({ socketService }) => ({ CONVERSATION_SOCKET_URL: socketService.url }))

/**
 * The events delivered to the gateway while `act` ran, each with its recipients as a sorted list: the
 * room events, or with `prefix` the others (the system messages' `message:new`).
 */
async function eventsOf(act: () => Promise<unknown>, prefix = 'room:') {
  delivered.length = 0
  await act()
  return delivered
    .filter(({ event }) => event.startsWith(prefix))
    .map(({ event, data, recipients }) => ({ event, data, recipients: [...recipients].sort() }))
}

const to = (...tenants: Tenant[]) => tenants.map((tenant) => tenant.conversationId).sort()

describe('room events: after commit, to the room members only', () => {
  test('create, rename, add, roles, owner, remove, leave, delete', async ({
    t,
    owner,
    stranger,
    crew: { ann, bob, cy, outsider },
  }) => {
    let roomId = ''
    const created = await eventsOf(async () => {
      roomId = (await createGroup(t.app, owner, [ann, bob]))._id
    })
    expect(created).toEqual([
      {
        event: 'room:created',
        data: { room: expect.objectContaining({ _id: roomId, type: 'group', owner: owner.conversationId }) },
        recipients: to(owner, ann, bob),
      },
    ])

    const updated = (update_type: string, ...members: Tenant[]) => ({
      event: 'room:updated',
      data: { room_id: roomId, update_type },
      recipients: to(...members),
    })

    expect(
      await eventsOf(() => roomCall(t.app, ann, 'PATCH', '/', { roomId, name: 'Refused: Ann is a member' })),
    ).toEqual([])
    expect(await eventsOf(() => roomCall(t.app, owner, 'PATCH', '/', { roomId, name: 'Renamed' }))).toEqual([
      updated('name', owner, ann, bob),
    ])

    expect(
      await eventsOf(() =>
        roomCall(t.app, owner, 'POST', '/members', { roomId, conversation_ids: [cy.conversationId] }),
      ),
    ).toEqual([
      {
        event: 'room:member_added',
        data: {
          room_id: roomId,
          member: {
            conversation_id: cy.conversationId,
            user: { name: 'Cy', email: expect.any(String), avatar: '' },
            role: 'member',
          },
        },
        recipients: to(owner, ann, bob, cy),
      },
      updated('members', owner, ann, bob, cy),
    ])
    expect(
      await eventsOf(() =>
        roomCall(t.app, owner, 'POST', '/members', { roomId, conversation_ids: [cy.conversationId] }),
      ),
    ).toEqual([])

    const role = { roomId, conversationId: ann.conversationId, role: 'admin' }
    expect(await eventsOf(() => roomCall(t.app, owner, 'PATCH', '/role', role))).toEqual([
      updated('roles', owner, ann, bob, cy),
    ])
    expect(
      await eventsOf(() =>
        roomCall(t.app, owner, 'PATCH', '/owner', { roomId, conversationId: ann.conversationId }),
      ),
    ).toEqual([updated('roles', owner, ann, bob, cy)])

    expect(
      await eventsOf(() =>
        roomCall(t.app, ann, 'DELETE', `/${roomId}/member?conversation_id=${bob.conversationId}`),
      ),
    ).toEqual([
      // The removed member hears of its own removal.
      {
        event: 'room:member_removed',
        data: { room_id: roomId, conversation_id: bob.conversationId },
        recipients: to(owner, ann, cy, bob),
      },
      updated('members', owner, ann, cy),
    ])

    // Ann owns the room now; her leaving hands it to the one who joined first (Ada Lovelace, the creator).
    expect(await eventsOf(() => roomCall(t.app, ann, 'POST', `/${roomId}/leave`))).toEqual([
      updated('roles', owner, cy),
      {
        event: 'room:member_removed',
        data: { room_id: roomId, conversation_id: ann.conversationId },
        recipients: to(owner, cy, ann),
      },
      updated('members', owner, cy),
    ])

    expect(await eventsOf(() => roomCall(t.app, owner, 'POST', `/${roomId}/favorite`))).toEqual([])
    expect(
      await eventsOf(() => roomCall(t.app, owner, 'POST', `/${roomId}/snooze`, { preset: '30m' })),
    ).toEqual([])
    expect(await eventsOf(() => roomCall(t.app, stranger, 'DELETE', `/?roomId=${roomId}`))).toEqual([])

    expect(await eventsOf(() => roomCall(t.app, owner, 'DELETE', `/?roomId=${roomId}`))).toEqual([
      { event: 'room:deleted', data: { room_id: roomId }, recipients: to(owner, cy) },
    ])
    for (const tenant of [outsider, stranger]) {
      expect(delivered.flatMap((e) => e.recipients)).not.toContain(tenant.conversationId)
    }
  })

  test('each system message reaches the members as message:new', async ({ t, owner, crew: { ann, bob } }) => {
    const room = await createGroup(t.app, owner, [ann])
    const added = await eventsOf(
      () =>
        roomCall(t.app, owner, 'POST', '/members', {
          roomId: room._id,
          conversation_ids: [bob.conversationId],
        }),
      'message:',
    )
    expect(added).toEqual([
      {
        event: 'message:new',
        data: {
          room_id: room._id,
          notify: true,
          message: expect.objectContaining({ kind: 'system', content: 'Ada Lovelace added Bob' }),
        },
        recipients: to(owner, ann, bob),
      },
    ])
  })

  test('the last one out deletes the room and hears room:deleted; a direct room found again raises nothing', async ({
    t,
    owner,
    crew: { bob },
  }) => {
    const room = await createGroup(t.app, owner, [])
    expect(await eventsOf(() => roomCall(t.app, owner, 'POST', `/${room._id}/leave`))).toEqual([
      { event: 'room:deleted', data: { room_id: room._id }, recipients: to(owner) },
    ])
    await createDirect(t.app, owner, bob)
    expect(await eventsOf(() => createDirect(t.app, bob, owner))).toEqual([])
  })

  test("room events also leave through the platform's emit, once committed", async ({
    t,
    owner,
    socketService,
    crew: { ann },
  }) => {
    const room = await createGroup(t.app, owner, [ann], { name: 'Emitted' })
    const createdHere = ({ event, data }: { event: string; data: unknown }) =>
      event === 'room:created' && (data as { room: { _id: string } }).room._id === room._id
    await expect
      .poll(() => socketService.emitted().find(createdHere), { timeout: 10_000 })
      .toMatchObject({ account_id: owner.accountId, data: { room: { name: 'Emitted' } } })
  })

  test("a member's message leaves through the platform's emit as message:new; a refused one does not", async ({
    t,
    owner,
    socketService,
    crew: { ann, outsider },
  }) => {
    const room = await createGroup(t.app, owner, [ann])
    const refused = await roomCall(t.app, outsider, 'POST', `/${room._id}/messages`, { content: 'let me in' })
    expect(refused.statusCode).toBe(400)
    await postMessage(t.app, ann, room._id, 'queued with the message')
    const messageNew = (content: string) => () =>
      socketService
        .emitted()
        .find(
          ({ event, data }) =>
            event === 'message:new' && (data as { message: { content: string } }).message.content === content,
        )
    await expect
      .poll(messageNew('queued with the message'), { timeout: 10_000 })
      .toMatchObject({ account_id: owner.accountId, data: { room_id: room._id, notify: true } })
    expect(messageNew('let me in')()).toBeUndefined()
  })
})
