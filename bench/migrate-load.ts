import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { type BenchRequest, VIA_TLS_PROXY } from './scenario.js'
import { isOperatorRoute, READS, type Scale, sendOnce, type VolumeAccount } from './volume-routes.js'

/**
 * The load of `npm run bench:migrate`: what an agency's users do all day on the two tables the measured
 * migrations touch (contacts and chat messages), read and written, for the largest account and a small one,
 * sent at a steady rate whatever the answers take (an open loop: a request stalled behind a lock does not
 * hold back the next, as a real user's would not), each request's time and status kept.
 */

/** bench:volume's reads of contacts and rooms (volume-routes.ts), reused as they are. */
const READ_NAMES = ['contacts', 'contact search', 'a contact', 'room list', "a room's messages"]

/** One request of the mix, for one account. */
export interface MixRequest {
  name: string
  account: string
  request: BenchRequest
}

/** One request sent: when (ms since the mix started), how long it took, its status (0: no answer). */
export interface Answer {
  name: string
  account: string
  startedMs: number
  ms: number
  status: number
  error?: string
}

const RUN = randomBytes(4).toString('hex')

/** A request of the account's main member; `next` builds what changes from one sending to the next. */
function asMember(
  account: VolumeAccount,
  method: BenchRequest['method'],
  path: string,
  next?: BenchRequest['next'],
): BenchRequest {
  const json: Record<string, string> = method === 'GET' ? {} : { 'content-type': 'application/json' }
  return {
    method,
    path,
    headers: { authorization: `Bearer ${account.token}`, ...json, ...VIA_TLS_PROXY },
    ...(next && { next }),
  }
}

/** A counter of one write's requests: each is a new one. */
const counter = () => {
  let n = 0
  return () => n++
}

/** The account's ids a write needs, picked by SQL as bench:volume picks its own. */
async function idsOf(scale: Scale, account: VolumeAccount, statement: string, what: string) {
  const { rows } = await scale.db.query<{ id: string }>(statement, [account.accountId])
  if (rows.length === 0) throw new Error(`no ${what} in ${account.name}`)
  return rows.map((row) => row.id)
}

/** A new contact each time: its email is the run's own, so that none is refused as a duplicate. */
function contactCreate(account: VolumeAccount): BenchRequest {
  const next = counter()
  return asMember(account, 'POST', '/v1/contacts', () => {
    const n = next()
    return {
      body: JSON.stringify({ name: `Migrate ${RUN} ${n}`, email: `migrate-${RUN}-${n}@bench.example` }),
    }
  })
}

/** The account's 200 newest contacts renamed in turn (one contact for all would queue on its row). */
async function contactUpdate(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const ids = await idsOf(
    scale,
    account,
    'select id from contacts where account_id = $1 order by id desc limit 200',
    'contact',
  )
  const next = counter()
  return asMember(account, 'PATCH', '/v1/contacts', () => {
    const n = next()
    return {
      path: `/v1/contacts/${ids[n % ids.length]}`,
      body: JSON.stringify({ name: `Renamed ${RUN} ${n}` }),
    }
  })
}

/** Messages posted to the account's 20 rooms of the latest activity in turn. */
async function messagePost(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const rooms = await idsOf(
    scale,
    account,
    'select id from rooms where account_id = $1 order by last_activity desc, id limit 20',
    'room',
  )
  const next = counter()
  return asMember(account, 'POST', '/api/conversation-v2/room', () => {
    const n = next()
    return {
      path: `/api/conversation-v2/room/${rooms[n % rooms.length]}/messages`,
      body: JSON.stringify({ content: `Message ${n} of migrate run ${RUN}` }),
    }
  })
}

/** Every request of the mix, for each account of the scale: five reads and three writes each. */
export async function migrationMix(scale: Scale): Promise<MixRequest[]> {
  const reads = READS.filter((route) => READ_NAMES.includes(route.name))
  const mix: MixRequest[] = []
  for (const account of scale.accounts) {
    for (const route of reads) {
      if (isOperatorRoute(route)) continue
      mix.push({ name: route.name, account: account.label, request: await route.prepare(scale, account) })
    }
    mix.push(
      { name: 'contact create', account: account.label, request: contactCreate(account) },
      { name: 'contact update', account: account.label, request: await contactUpdate(scale, account) },
      { name: 'message post', account: account.label, request: await messagePost(scale, account) },
    )
  }
  return mix
}

export interface RunningMix {
  /** The mix's clock: ms since it started (performance.now() based). */
  now(): number
  /** Stops sending, waits for the requests in flight, and returns every answer. */
  stop(): Promise<Answer[]>
}

const TICK_MS = 5

/**
 * Sends the mix's requests in turn at `rate` a second, each on schedule (those a tick is late for are sent
 * at once): the rate holds whatever the answers take.
 */
export function startMix(baseUrl: string, mix: MixRequest[], rate: number): RunningMix {
  const started = performance.now()
  const now = () => performance.now() - started
  const answers: Answer[] = []
  const inFlight = new Set<Promise<void>>()
  let sent = 0
  const send = (item: MixRequest) => {
    const startedMs = now()
    const done = sendOnce(baseUrl, item.request)
      .then(({ status }) => ({ status }))
      .catch((error: Error) => ({ status: 0, error: error.message }))
      .then((outcome) => {
        answers.push({ name: item.name, account: item.account, startedMs, ms: now() - startedMs, ...outcome })
        inFlight.delete(done)
      })
    inFlight.add(done)
  }
  const timer = setInterval(() => {
    const due = Math.floor((now() * rate) / 1000)
    for (; sent < due; sent++) send(mix[sent % mix.length] as MixRequest)
  }, TICK_MS)
  return {
    now,
    stop: async () => {
      clearInterval(timer)
      await Promise.all([...inFlight])
      return answers
    },
  }
}

/** Sends each request of the mix once: each must answer 2xx, or the mix cannot measure anything. */
export async function checkMix(baseUrl: string, mix: MixRequest[]): Promise<void> {
  for (const item of mix) {
    const { status, body } = await sendOnce(baseUrl, item.request)
    if (status < 200 || status > 299) {
      throw new Error(`${item.name} (${item.account}) answered ${status}: ${body.slice(0, 200)}`)
    }
  }
}
