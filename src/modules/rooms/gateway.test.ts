import { describe, expect, vi } from 'vitest'
import { anotherInstance } from '../../../test/helpers/app.js'
import { addUser, type Tenant } from '../../../test/helpers/fixtures.js'
import { type RealtimeClient, realtimeClients } from '../../../test/helpers/realtime.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { TYPING_EVENT } from './gateway.service.js'

const redisUrl = process.env.REDIS_URL
test.override('appEnv', redisUrl ? { REDIS_URL: redisUrl } : {})

const ROOMS = '/api/conversation-v2/room'
const connectTo = realtimeClients()
let url: string
let colleague: Tenant
test.beforeAll(async ({ t, owner }) => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  colleague = await addUser(t.app, owner.accountId, 'Grace Hopper')
})

const connect = (tenant: Tenant) => connectTo(url, { token: tenant.token })
const eventsNamed = (client: RealtimeClient, name: string) =>
  client.received.filter(({ event }) => event === name).map(({ data }) => data)

describe('room events over the built-in Socket.IO gateway', () => {
  test('room:created reaches each member once, after the write, and nobody else', async ({
    t,
    owner,
    stranger,
  }) => {
    const [asOwner, asColleague, asStranger] = await Promise.all([
      connect(owner),
      connect(colleague),
      connect(stranger),
    ])
    const created = await t.app.inject({
      method: 'POST',
      url: ROOMS,
      headers: owner.headers,
      payload: { type: 'group', conversation_ids: [colleague.conversationId], room_name: 'Launch' },
    })
    expect(created.statusCode).toBe(201)
    const roomId = created.json()._id
    await vi.waitFor(() => {
      expect(eventsNamed(asOwner, 'room:created')).toHaveLength(1)
      expect(eventsNamed(asColleague, 'room:created')).toHaveLength(1)
    })
    expect(eventsNamed(asColleague, 'room:created')[0]).toMatchObject({ room: { _id: roomId } })
    // The rename's room:updated arriving after it shows nothing else was on its way to the stranger either.
    await t.app.inject({
      method: 'PATCH',
      url: ROOMS,
      headers: owner.headers,
      payload: { roomId, name: 'Launch day' },
    })
    await vi.waitFor(() => expect(eventsNamed(asColleague, 'room:updated')).toHaveLength(1))
    expect(asStranger.received).toEqual([])
  })

  test('typing is relayed to the other members only, and refused to a non-member', async ({
    t,
    owner,
    stranger,
  }) => {
    const created = await t.app.inject({
      method: 'POST',
      url: ROOMS,
      headers: owner.headers,
      payload: { type: 'direct', conversation_ids: [colleague.conversationId] },
    })
    const roomId = created.json()._id
    const [asOwner, asColleague, asStranger] = await Promise.all([
      connect(owner),
      connect(colleague),
      connect(stranger),
    ])
    const answer = await asColleague.socket.emitWithAck(TYPING_EVENT, { room_id: roomId })
    expect(answer).toEqual({ ok: true })
    await vi.waitFor(() =>
      expect(eventsNamed(asOwner, TYPING_EVENT)).toEqual([
        { room_id: roomId, conversation_id: colleague.conversationId },
      ]),
    )
    expect(eventsNamed(asColleague, TYPING_EVENT)).toEqual([])

    expect(await asStranger.socket.emitWithAck(TYPING_EVENT, { room_id: roomId })).toEqual({
      ok: false,
      error: 'Room does not exist',
    })
    expect(await asStranger.socket.emitWithAck(TYPING_EVENT, {})).toEqual({
      ok: false,
      error: 'room_id is required',
    })
    expect(eventsNamed(asOwner, TYPING_EVENT)).toHaveLength(1)
  })

  test.skipIf(!redisUrl)(
    'a member connected to one instance hears a room created through another (Redis adapter)',
    async ({ t, owner }) => {
      const other = await anotherInstance(t)
      try {
        const asColleague = await connect(colleague)
        const created = await other.inject({
          method: 'POST',
          url: ROOMS,
          headers: owner.headers,
          payload: { type: 'group', conversation_ids: [colleague.conversationId], room_name: 'Across' },
        })
        expect(created.statusCode).toBe(201)
        await vi.waitFor(() =>
          expect(eventsNamed(asColleague, 'room:created')).toEqual([
            expect.objectContaining({ room: expect.objectContaining({ _id: created.json()._id }) }),
          ]),
        )
      } finally {
        await other.close()
      }
    },
  )
})
