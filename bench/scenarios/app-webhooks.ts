import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { adminPost, createMember, type Member } from '../admin.js'
import { percentile } from '../each.js'
import { loadAverage } from '../machine.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'

const APPS = 10
const SCOPE = 'crm.contacts.read'
/** Contact changes of each kind of round together (`--requests`), each told to every app. */
const DEFAULT_CHANGES = 450
/** Untimed changes first, all apps healthy: the server's code, pools and caches warm before either run. */
const WARMUP_CHANGES = 100
/** Changes a second, sent open-loop: each at its time, whatever the answers before it. */
const CHANGES_PER_SECOND = 10
/** Rounds of each kind (all healthy, one timing out), alternating. */
const ROUNDS = 3
/** How long the healthy apps' deliveries may take to arrive once the last change is answered. */
const ARRIVAL_WAIT_MS = 30_000
/** "Unchanged": the healthy apps' p99 with one app timing out at most this much above the all-healthy run's. */
const TARGET_P99_RATIO = 1.25

/**
 * One app's receiver: answers 200 at once, or, timing out, never (the server's timeout ends each attempt).
 * Records when each notification (by its contact's email) arrived.
 */
interface Receiver {
  url: string
  timingOut: boolean
  arrivals: Map<string, number[]>
  /** Requests held open now by a timing-out receiver, and the most at once. */
  held: { now: number; most: number }
  close(): Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { timingOut: false, arrivals: new Map<string, number[]>(), held: { now: 0, most: 0 } }
  const hold = (response: ServerResponse) => {
    receiver.held.now++
    receiver.held.most = Math.max(receiver.held.most, receiver.held.now)
    response.on('close', () => receiver.held.now--)
  }
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const arrivedAt = performance.now()
      if (receiver.timingOut) return hold(response)
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { email: string } }
      receiver.arrivals.set(data.email, [...(receiver.arrivals.get(data.email) ?? []), arrivedAt])
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
}

/**
 * The apps, each told at its own receiver, and each holding a live grant in the member's account with the
 * scope: a refresh token as the consent and the code exchange leave it (written with SQL, as `oauth-token`
 * writes its codes; the pages of that flow are `contacts-oauth`'s measure).
 */
async function grantedApps(target: Target, db: pg.Pool, member: Member, receivers: Receiver[]) {
  const clientIds: string[] = []
  for (const [index, receiver] of receivers.entries()) {
    const app = await adminPost<{ client_id: string }>(target, '/v1/admin/oauth/apps', {
      name: `Bench listener ${index}`,
      redirect_uris: ['https://bench.example/callback'],
      scopes: [SCOPE],
      active: true,
      webhook_url: receiver.url,
    })
    const id = () => randomBytes(12).toString('hex')
    await db.query(
      `insert into oauth_refresh_tokens (id, token_hash, code_id, client_id, user_id, account_id, scopes, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, now() + interval '90 days')`,
      [
        id(),
        createHash('sha256').update(id()).digest('hex'),
        id(),
        app.client_id,
        member.userId,
        member.accountId,
        [SCOPE],
      ],
    )
    clientIds.push(app.client_id)
  }
  return clientIds
}

interface Run {
  /** When each change (by its contact's email) was answered. */
  answeredAt: Map<string, number>
  failedChanges: number
}

/** Creates `changes` contacts at CHANGES_PER_SECOND, each answered before its deliveries can go. */
async function driveChanges(target: Target, member: Member, label: string, changes: number): Promise<Run> {
  const run: Run = { answeredAt: new Map(), failedChanges: 0 }
  const url = new URL('/v1/contacts', target.baseUrl)
  const started = performance.now()
  const sent: Promise<void>[] = []
  for (let i = 0; i < changes; i++) {
    await delay(Math.max(0, started + (i * 1000) / CHANGES_PER_SECOND - performance.now()))
    const email = `${label}-${i}@bench.example`
    sent.push(
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email, name: `Bench ${i}` }),
      }).then(async (response) => {
        await response.arrayBuffer()
        if (response.status === 201) run.answeredAt.set(email, performance.now())
        else run.failedChanges++
      }),
    )
  }
  await Promise.all(sent)
  return run
}

/** Waits until every answered change reached every receiver in `receivers`, or ARRIVAL_WAIT_MS passed. */
async function untilArrived(run: Run, receivers: Receiver[]): Promise<boolean> {
  const deadline = performance.now() + ARRIVAL_WAIT_MS
  const arrived = () =>
    receivers.every((receiver) => [...run.answeredAt.keys()].every((email) => receiver.arrivals.has(email)))
  while (!arrived()) {
    if (performance.now() > deadline) return false
    await delay(100)
  }
  return true
}

/** The healthy receivers' delivery latencies (first arrival after the change's answer), sorted, and repeats. */
function latenciesOf(run: Run, receivers: Receiver[]) {
  const latencies: number[] = []
  let repeats = 0
  for (const receiver of receivers)
    for (const [email, answeredAt] of run.answeredAt) {
      const arrivals = receiver.arrivals.get(email) ?? []
      if (arrivals[0] !== undefined) latencies.push(arrivals[0] - answeredAt)
      repeats += Math.max(0, arrivals.length - 1)
    }
  return { latencies: latencies.sort((a, b) => a - b), repeats }
}

const ms = (value: number) => `${value.toFixed(0)} ms`

/**
 * The server's part of the healthy apps' latency: from the change's transaction to the first attempt, as the
 * deliveries record them (the rest is the call, and the bench process receiving it).
 */
async function serverWaits(setup: Setup, label: string): Promise<number[]> {
  const { rows } = await setup.db.query<{ wait_ms: number }>(
    `select extract(epoch from ((attempts -> 0 ->> 'at')::timestamptz - created_at)) * 1000 as wait_ms
     from oauth_webhook_deliveries where client_id = any($1) and notification -> 'data' ->> 'email' like $2`,
    [setup.clientIds.slice(1), `${label}-%`],
  )
  return rows.map((row) => Number(row.wait_ms))
}

interface Setup {
  target: Target
  member: Member
  receivers: Receiver[]
  clientIds: string[]
  db: pg.Pool
}

/** One round: its changes told, and what the nine apps healthy in every round received of them. */
async function measureRound(setup: Setup, label: string, changes: number) {
  const { target, member, receivers } = setup
  const run = await driveChanges(target, member, label, changes)
  const compared = receivers.slice(1)
  const complete = await untilArrived(run, compared)
  const { latencies, repeats } = latenciesOf(run, compared)
  return {
    serverWaits: await serverWaits(setup, label),
    complete,
    failedChanges: run.failedChanges,
    missing: run.answeredAt.size * compared.length - latencies.length,
    repeats,
    latencies,
  }
}
type Round = Awaited<ReturnType<typeof measureRound>>

/** The rounds of one kind together: their latencies' percentiles and what went wrong. */
function summary(rounds: Round[]) {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b)
  const waits = rounds.flatMap((round) => round.serverWaits).sort((a, b) => a - b)
  const sum = (field: 'failedChanges' | 'missing' | 'repeats') =>
    rounds.reduce((total, round) => total + round[field], 0)
  return {
    complete: rounds.every((round) => round.complete),
    failedChanges: sum('failedChanges'),
    missing: sum('missing'),
    repeats: sum('repeats'),
    count: latencies.length,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
    roundP99s: rounds.map((round) => ms(percentile(round.latencies, 0.99))).join(', '),
    serverP50: percentile(waits, 0.5),
    serverP99: percentile(waits, 0.99),
  }
}

/**
 * The rounds alternate, all healthy then app 0 timing out, ROUNDS times each, so that a change in the
 * machine's other load falls on both kinds alike (the report says the load before and after).
 */
async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('app-webhooks needs the server on PostgreSQL (--postgres)')
  const changes = options.requests ?? DEFAULT_CHANGES
  const perRound = Math.ceil(changes / ROUNDS)
  const receivers = await Promise.all(Array.from({ length: APPS }, startReceiver))
  const slow = receivers[0] as Receiver
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const member = await createMember(target)
    const clientIds = await grantedApps(target, db, member, receivers)
    const setup: Setup = { target, member, receivers, clientIds, db }
    const warm = await measureRound(setup, 'warm-up', WARMUP_CHANGES)
    if (!warm.complete) throw new Error("the warm-up's deliveries did not all arrive")
    const loadBefore = loadAverage()
    const healthyRounds: Round[] = []
    const timingOutRounds: Round[] = []
    for (let round = 0; round < ROUNDS; round++) {
      slow.timingOut = false
      healthyRounds.push(await measureRound(setup, `healthy-${round}`, perRound))
      slow.timingOut = true
      timingOutRounds.push(await measureRound(setup, `timing-out-${round}`, perRound))
    }
    const loadAfter = loadAverage()
    const healthy = summary(healthyRounds)
    const oneTimingOut = summary(timingOutRounds)
    const ratio = oneTimingOut.p99 / healthy.p99
    const failed = [healthy, oneTimingOut].some(
      (run) => !run.complete || run.failedChanges > 0 || run.missing > 0 || run.repeats > 0,
    )
    const line = (name: string, run: typeof healthy) =>
      `${name}: ${run.count} deliveries to the 9 apps healthy throughout   p50 ${ms(run.p50)}, p99 ${ms(run.p99)}, ` +
      `max ${ms(run.max)} (p99 by round ${run.roundP99s})   missing ${run.missing}, repeated ${run.repeats}, ` +
      `changes refused ${run.failedChanges}\n  of which the server's, from the change's transaction to the first attempt: ` +
      `p50 ${ms(run.serverP50)}, p99 ${ms(run.serverP99)}`
    return {
      passed: !failed && ratio <= TARGET_P99_RATIO,
      failed,
      lines: [
        `${WARMUP_CHANGES} contact changes untimed, then ${ROUNDS} rounds of each kind, alternating, of ${perRound} changes ` +
          `at ${CHANGES_PER_SECOND}/s, each change told to ${APPS} apps; latency from the change's answer to the receiver's arrival`,
        '',
        line('ten healthy apps', healthy),
        line('app 0 timing out, nine healthy', oneTimingOut),
        `healthy apps' p99, one timing out / all healthy: ${ratio.toFixed(2)}   target <= ${TARGET_P99_RATIO}`,
        `the timing-out app: at most ${slow.held.most} of its attempts in flight at once`,
        `load average (1, 5, 15 min) before ${loadBefore}, after ${loadAfter}`,
      ],
    }
  } finally {
    await db.end()
    await Promise.all(receivers.map((receiver) => receiver.close()))
  }
}

/** Ten apps told of contact changes, once all healthy and once with one whose receiver never answers. */
export const appWebhooks: MeasuredScenario = {
  description:
    "POST /v1/contacts told to 10 apps: the healthy apps' delivery latency, with and without one timing out",
  requiresPostgres: true,
  // The bench's server runs in production, where webhooks reach public addresses only: its receivers are local.
  serverEnv: { APP_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' },
  measure,
}
