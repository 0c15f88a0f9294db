import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCOUNT_SIZE, accountsOf, layRooms, prepareChat } from '../bench/sockets-chat.js'
import { DeliveryLedger, WAVE_RECONNECTED } from '../bench/sockets-ledger.js'
import { runSocketLoad } from '../bench/sockets-load.js'
import { listenTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/app.js'

describe("the sockets bench's rooms", () => {
  it('lays rooms of 2 to 50 members within each account, every client in at least 4 of them', () => {
    const accounts = accountsOf(2 * ACCOUNT_SIZE + 37)
    expect(accounts.map((account) => account.length)).toEqual([ACCOUNT_SIZE, ACCOUNT_SIZE, 37])
    const rooms = layRooms(accounts, 4)
    const roomsOf = new Map<number, number>()
    for (const room of rooms) {
      expect(room.length).toBeGreaterThanOrEqual(2)
      expect(room.length).toBeLessThanOrEqual(50)
      expect(new Set(room).size).toBe(room.length)
      expect(new Set(room.map((client) => Math.floor(client / ACCOUNT_SIZE))).size).toBe(1)
      for (const client of room) roomsOf.set(client, (roomsOf.get(client) ?? 0) + 1)
    }
    expect(roomsOf.size).toBe(2 * ACCOUNT_SIZE + 37)
    expect(Math.min(...roomsOf.values())).toBe(4)
    expect(rooms.some((room) => room.length === 50)).toBe(true)
  })
})

describe("the sockets bench's ledger", () => {
  const everyone = () => true

  it('counts missed, duplicated and non-member deliveries, and times the rest from the 201', () => {
    // Room 0: clients 0 and 1; room 1: clients 1 and 2.
    const ledger = new DeliveryLedger([
      [0, 1],
      [1, 2],
    ])
    ledger.sending(1, 0, 'steady', everyone, 0)
    ledger.arrived(0, 1, 0, 5) // before the answer: 0 ms
    ledger.answered(1, 10)
    ledger.arrived(0, 1, 0, 12) // again
    ledger.arrived(2, 1, 0, 12) // client 2 is no member of room 0
    ledger.sending(2, 1, 'steady', (client) => client !== 2, 20) // client 2 not connected
    ledger.answered(2, 30)
    ledger.arrived(1, 2, 1, 40)
    const summary = ledger.summary()
    expect(summary).toMatchObject({
      messages: 2,
      expected: 3,
      delivered: 2,
      missed: 1,
      duplicated: 1,
      toNonMembers: 1,
      beforeResponse: 1,
    })
    expect(summary.latency.steady?.fromResponse).toEqual({ deliveries: 2, p50Ms: 0, p99Ms: 10, maxMs: 10 })
    expect(summary.latency.steady?.fromRequest.maxMs).toBe(20)
  })

  it("no longer expects what the wave's clients had not received, and counts their deliveries apart", () => {
    const ledger = new DeliveryLedger([[0, 1]])
    ledger.sending(1, 0, 'steady', everyone, 0)
    ledger.answered(1, 1)
    ledger.disconnectingWave([1])
    ledger.arrived(0, 1, 0, 2)
    ledger.sending(2, 0, 'wave', everyone, 3)
    ledger.answered(2, 4)
    ledger.arrived(0, 2, 0, 6)
    ledger.arrived(1, 2, 0, 7)
    const summary = ledger.summary()
    expect(summary).toMatchObject({ expected: 3, missed: 0, duplicated: 0, toNonMembers: 0 })
    expect(summary.latency.wave?.fromResponse.deliveries).toBe(1)
    expect(summary.latency[WAVE_RECONNECTED]?.fromResponse.maxMs).toBe(3)
  })
})

describe('a tiny sockets run against the service', () => {
  let t: TestApp & { baseUrl: string }
  beforeAll(async () => {
    t = await listenTestApp(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {})
  }, 60_000)
  afterAll(async () => {
    await t?.close()
  })

  it('delivers every message to every connected member once, through a reconnecting wave', async () => {
    const target = { baseUrl: t.baseUrl, adminToken: TEST_ADMIN_TOKEN, databasePoolSize: 1 }
    const chat = await prepareChat([target], 20, 4)
    let connectedBeforeSending = 0
    const result = await runSocketLoad(
      { ...chat, instances: [t.baseUrl], rate: 40, seconds: 1, wave: 5 },
      {
        async connected(figures) {
          connectedBeforeSending = figures.connected
        },
      },
    )
    expect(connectedBeforeSending).toBe(20)
    expect(result.wave).toMatchObject({ attempted: 5, connected: 5 })
    expect(result.sends.failed).toBe(0)
    expect(result.sends.sent).toBeGreaterThanOrEqual(40)
    // The answers are timed by the phase they were sent in: the wave's queue is not the steady figure.
    const { steady, wave } = result.sends.answered
    expect(steady?.deliveries).toBeGreaterThan(0)
    expect(wave?.deliveries).toBeGreaterThan(0)
    expect((steady?.deliveries ?? 0) + (wave?.deliveries ?? 0)).toBe(result.sends.sent)
    expect(steady?.p99Ms).toBeGreaterThan(0)
    expect(result.ledger).toMatchObject({ missed: 0, duplicated: 0, toNonMembers: 0 })
    expect(result.ledger.delivered).toBeGreaterThan(result.sends.sent)
    expect(result.dropped).toEqual({})
  }, 60_000)
})
