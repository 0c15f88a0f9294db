import { randomBytes } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import Stripe from 'stripe'
import { createMember, type Member } from '../admin.js'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadAverage } from '../machine.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'

export const WEBHOOK_PATH = '/reviews/webhook/paymentprovider/charge'
const DEFAULT_WEBHOOKS = 10_000
// Untimed posts first, so that V8 has optimised the path and the pools are open before the clock starts.
const WARMUP = 1_000
const ACCOUNTS = 4
const TARGET_PER_SECOND = 1_000
const TARGET_P99_MS = 50
const POLL_MS = 200
// Processing that applies nothing new for this long has stopped: the run fails instead of waiting on.
const STALL_MS = 60_000

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64url')}`
export const serverEnv = { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }

/** An account that asks every paying customer for a Google review a day after the payment. */
async function reviewingAccount(target: Target): Promise<Member> {
  const member = await createMember(target)
  const call = async (method: string, path: string, body: object) => {
    const response = await fetch(new URL(path, target.baseUrl), {
      method,
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (!response.ok)
      throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  }
  await call('POST', '/reviews/links', { platform: 'google', url: 'https://g.page/r/bench/review' })
  await call('PUT', '/reviews/auto-review-request', {
    enabled: true,
    trigger: 'order_completed',
    delay_hours: 24,
    platforms: ['google'],
    send_method: 'email',
  })
  return member
}

/** `charge.succeeded` events as Stripe posts them, signed just before sending: one customer each. */
function chargeEvents(runId: string, accounts: Member[], count: number, offset: number): EachRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i
    return chargeEvent(runId, accounts[n % accounts.length]?.accountId, n)
  })
}

/** The `n`-th `charge.succeeded` of the run as Stripe posts it to the account, signed now; customer `n`. */
export function chargeEvent(runId: string, accountId: string | undefined, n: number): EachRequest {
  const payload = JSON.stringify({
    id: `evt_${runId}_${n}`,
    object: 'event',
    type: 'charge.succeeded',
    api_version: '2024-06-20',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `ch_${runId}_${n}`,
        object: 'charge',
        amount: 4200 + (n % 50) * 100,
        currency: 'usd',
        status: 'succeeded',
        payment_intent: `pi_${runId}_${n}`,
        billing_details: { name: `Customer ${n}`, email: `customer-${n}@bench.example`, phone: null },
        metadata: { account_id: accountId, order_id: `order-${n}` },
      },
    },
  })
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET })
  return { headers: { 'stripe-signature': signature }, body: payload }
}

interface Applied {
  events: number
  pending: number
  processed: number
  requests: number
  /** Events that scheduled other than exactly one request. */
  notOne: number
}

async function applied(db: pg.Pool, runId: string): Promise<Applied> {
  const { rows } = await db.query<Record<keyof Applied, string>>(
    `select count(*) as events,
            count(*) filter (where e.status = 'received') as pending,
            count(*) filter (where e.status = 'processed') as processed,
            coalesce(sum(r.requests), 0) as requests,
            count(*) filter (where e.status <> 'received' and coalesce(r.requests, 0) <> 1) as "notOne"
       from review_webhook_events e
       left join (select event_id, count(*) as requests from review_requests group by event_id) r
         on r.event_id = e.id
      where e.source = 'paymentprovider' and e.event_id like $1`,
    [`evt\\_${runId}\\_%`],
  )
  const row = rows[0]
  return {
    events: Number(row?.events),
    pending: Number(row?.pending),
    processed: Number(row?.processed),
    requests: Number(row?.requests),
    notOne: Number(row?.notOne),
  }
}

/** The run's events still waiting to be applied: one index range, cheap enough to poll. */
async function pending(db: pg.Pool, runId: string): Promise<number> {
  const { rows } = await db.query<{ pending: string }>(
    `select count(*) as pending from review_webhook_events
      where status = 'received' and source = 'paymentprovider' and event_id like $1`,
    [`evt\\_${runId}\\_%`],
  )
  return Number(rows[0]?.pending)
}

/** Waits until no stored event is left to apply, then counts what was applied; fails when processing stalls. */
async function untilApplied(db: pg.Pool, runId: string): Promise<Applied> {
  let last = await pending(db, runId)
  let progressAt = performance.now()
  while (last > 0 && performance.now() - progressAt <= STALL_MS) {
    await delay(POLL_MS)
    const now = await pending(db, runId)
    if (now < last) progressAt = performance.now()
    last = now
  }
  return applied(db, runId)
}

const bad = (sent: SentEach, expected: number) =>
  sent.errors > 0 || sent.answers.length !== expected || sent.answers.some((a) => a.status !== 200)

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('review-webhooks needs the server on PostgreSQL (--postgres)')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, () => reviewingAccount(target)))
    const runId = randomBytes(4).toString('hex')
    const count = options.requests ?? DEFAULT_WEBHOOKS
    const url = new URL(WEBHOOK_PATH, target.baseUrl).toString()
    const loadBefore = loadAverage()
    const warm = await postEach(
      url,
      'application/json',
      chargeEvents(runId, accounts, WARMUP, 0),
      options.connections,
    )
    const startedAt = performance.now()
    const sent = await postEach(
      url,
      'application/json',
      chargeEvents(runId, accounts, count, WARMUP),
      options.connections,
    )
    const result = await untilApplied(db, runId)
    const appliedSeconds = (performance.now() - startedAt) / 1000
    const loadAfter = loadAverage()
    const expected = WARMUP + count
    const failed =
      bad(warm, WARMUP) ||
      bad(sent, count) ||
      result.events !== expected ||
      result.processed !== expected ||
      result.requests !== expected ||
      result.notOne !== 0
    const rate = count / sent.seconds
    const others = sent.answers.filter((a) => a.status !== 200).length
    return {
      passed: !failed && rate >= TARGET_PER_SECOND && sent.p99Ms < TARGET_P99_MS,
      failed,
      lines: [
        `${WARMUP} Stripe-signed charge.succeeded webhooks untimed, then ${count} timed, on ${options.connections} connections, ${ACCOUNTS} accounts, one customer each`,
        '',
        `acknowledged (200: verified and stored; its job queued just after): ${count} in ${sent.seconds.toFixed(2)} s   ` +
          `${rate.toFixed(0)}/s   p50 ${sent.p50Ms.toFixed(1)} ms, p99 ${sent.p99Ms.toFixed(1)} ms   ` +
          `not 200: ${others}, connection errors ${sent.errors}   target >= ${TARGET_PER_SECOND}/s, p99 < ${TARGET_P99_MS} ms`,
        `acknowledged and applied (each a scheduled review request): ${(count / appliedSeconds).toFixed(0)}/s over ${appliedSeconds.toFixed(2)} s`,
        '',
        `events stored ${result.events} of ${expected}, processed ${result.processed}, left unapplied ${result.pending}; ` +
          `review requests ${result.requests}, events not scheduling exactly one ${result.notOne}`,
        `load average (1, 5, 15 min) before ${loadBefore}, after ${loadAfter}`,
      ],
    }
  } finally {
    await db.end()
  }
}

/** Stripe's payment webhook: each signed charge stored, acknowledged, then scheduling one review request. */
export const reviewWebhooks: MeasuredScenario = {
  description: `POST ${WEBHOOK_PATH}: Stripe-signed charge.succeeded events, each scheduling one review request`,
  requiresPostgres: true,
  serverEnv,
  measure,
}
