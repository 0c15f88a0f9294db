import { setTimeout as delay } from 'node:timers/promises'
import { adminPost } from './admin.js'
import type { Target } from './scenario.js'
import { ROOMS_PATH, random } from './scenarios/rooms-seed.js'

/**
 * The chat of the sockets scenario, made as operators and users make it: accounts, users and their chat
 * identities and tokens through the admin API, rooms through the room API by their owners.
 */

/** Chat identities per account; rooms lie within one account. */
export const ACCOUNT_SIZE = 100
/** Sizes of rooms, taken in turn: mostly small, a few of 25 and 50 members (early, so that a round of 100 holds one). */
const ROOM_SIZES = [50, 2, 2, 3, 4, 6, 10, 16, 25]
const MAX_ROOM_SIZE = 50
const TOKEN_TTL_SECONDS = 4 * 3600
// Requests of the preparation in flight at once, over both instances.
const PREPARE_CONCURRENCY = 16

// A 503 (a busy pool, a slow database: the service's answer on a loaded machine) is asked again this many
// times, after the service's retry_after (2 s), as its clients do.
const BUSY_ATTEMPTS = 5
const BUSY_RETRY_MS = 2_000

/** A connected client of the run: its platform JWT and the instance it connects to. */
export interface ChatClient {
  token: string
  instance: number
}

export interface Chat {
  clients: ChatClient[]
  /** Each room's id and its members (indices into `clients`). */
  rooms: { id: string; members: number[] }[]
}

/** Calls `work` on every item, at most `concurrency` at once. */
export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      await work(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

/**
 * `call`, asked again after a 503: the preparation is not what the run measures, and a transaction that
 * answered 503 was rolled back, so asking again makes nothing twice.
 */
async function unlessBusy<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call()
    } catch (error) {
      const busy = error instanceof Error && error.message.includes(' answered 503:')
      if (!busy || attempt >= BUSY_ATTEMPTS) throw error
      await delay(BUSY_RETRY_MS)
    }
  }
}

/** Clients `0..clients-1` in accounts of ACCOUNT_SIZE consecutive clients. */
export function accountsOf(clients: number): number[][] {
  const accounts: number[][] = []
  for (let first = 0; first < clients; first += ACCOUNT_SIZE)
    accounts.push(Array.from({ length: Math.min(ACCOUNT_SIZE, clients - first) }, (_, i) => first + i))
  return accounts
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j] as T, copy[i] as T]
  }
  return copy
}

/**
 * Rooms of 2 to 50 members within each account (at least 2 clients each), every client in exactly
 * `roomsPerClient` of them: each round shuffles the account's clients and cuts them into rooms of the
 * sizes in turn, a client left alone at the end joining the round's last room or, that one full, a room
 * with the round's first client.
 */
export function layRooms(
  accounts: readonly (readonly number[])[],
  roomsPerClient: number,
  seed = 32,
): number[][] {
  const next = random(seed)
  const rooms: number[][] = []
  let turn = 0
  for (const account of accounts) {
    for (let round = 0; round < roomsPerClient; round++) {
      const order = shuffled(account, next)
      const cut: number[][] = []
      for (let at = 0; at < order.length; ) {
        const size = ROOM_SIZES[turn++ % ROOM_SIZES.length] as number
        cut.push(order.slice(at, at + size))
        at += size
      }
      const last = cut.at(-1) as number[]
      if (last.length === 1 && cut.length > 1) {
        cut.pop()
        const previous = cut.at(-1) as number[]
        if (previous.length < MAX_ROOM_SIZE) previous.push(last[0] as number)
        else cut.push([last[0] as number, order[0] as number])
      }
      rooms.push(...cut)
    }
  }
  return rooms
}

/** Accounts, the identities of `clients` clients and their tokens, and rooms laid out by `layRooms`. */
export async function prepareChat(
  instances: readonly Target[],
  clients: number,
  roomsPerClient: number,
): Promise<Chat> {
  const on = (i: number) => instances[i % instances.length] as Target
  const accounts = accountsOf(clients)
  const accountIds: string[] = []
  await forEachConcurrently(accounts, PREPARE_CONCURRENCY, async (_, a) => {
    accountIds[a] = (
      await unlessBusy(() =>
        adminPost<{ _id: string }>(on(a), '/v1/admin/accounts', { name: `sockets ${a}` }),
      )
    )._id
  })
  // One user per place in an account, a member of every account: its identity differs in each.
  const userIds: string[] = []
  const identities: string[] = []
  const firstAccount = accounts[0] ?? []
  await forEachConcurrently(firstAccount, PREPARE_CONCURRENCY, async (client, u) => {
    const email = `sockets-${u}-${Date.now()}@example.com`
    const user = await unlessBusy(() =>
      adminPost<{ _id: string; memberships: { conversation_id: string }[] }>(on(u), '/v1/admin/users', {
        email,
        password: 'sockets-bench-password',
        name: `Agent ${u}`,
        account_id: accountIds[0],
        main: true,
      }),
    )
    userIds[u] = user._id
    identities[client] = user.memberships[0]?.conversation_id ?? ''
  })
  const userOf = (client: number) => userIds[client % ACCOUNT_SIZE] as string
  const accountOf = (client: number) => accountIds[Math.floor(client / ACCOUNT_SIZE)] as string
  const later = accounts.slice(1).flat()
  await forEachConcurrently(later, PREPARE_CONCURRENCY, async (client) => {
    const membership = await unlessBusy(() =>
      adminPost<{ conversation_id: string }>(on(client), `/v1/admin/users/${userOf(client)}/memberships`, {
        account_id: accountOf(client),
      }),
    )
    identities[client] = membership.conversation_id
  })
  const chatClients: ChatClient[] = []
  const all = Array.from({ length: clients }, (_, i) => i)
  await forEachConcurrently(all, PREPARE_CONCURRENCY, async (client) => {
    const { token } = await unlessBusy(() =>
      adminPost<{ token: string }>(on(client), '/v1/admin/tokens', {
        user_id: userOf(client),
        account_id: accountOf(client),
        ttl: TOKEN_TTL_SECONDS,
      }),
    )
    chatClients[client] = { token, instance: client % instances.length }
  })
  const layout = layRooms(accounts, roomsPerClient)
  const rooms: Chat['rooms'] = []
  await forEachConcurrently(layout, PREPARE_CONCURRENCY, async (members, r) => {
    const [owner, ...others] = members as [number, ...number[]]
    const text = await unlessBusy(async () => {
      const response = await fetch(new URL(ROOMS_PATH, on(r).baseUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${chatClients[owner]?.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'group',
          room_name: `Room ${r}`,
          conversation_ids: others.map((client) => identities[client]),
        }),
      })
      const body = await response.text()
      if (response.status !== 201) throw new Error(`POST ${ROOMS_PATH} answered ${response.status}: ${body}`)
      return body
    })
    rooms[r] = { id: (JSON.parse(text) as { _id: string })._id, members }
  })
  return { clients: chatClients, rooms }
}
