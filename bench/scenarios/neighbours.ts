import { randomBytes } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import type { Member } from '../admin.js'
import { type Child, startNode, stopChild } from '../children.js'
import { loadLine, sampleMachine } from '../machine.js'
import { backlogOf, drained, jobTimesOf, resultsOf, type WaitFigures, waitsOf } from '../neighbours-counts.js'
import { type FloodResult, type Posted, startFlood } from '../neighbours-flood.js'
import {
  insertRecords,
  leadPages,
  membersOf,
  providersOfRun,
  reviewingAccount,
  roomOf,
  roomWith,
  startProviders,
  startWorkers,
} from '../neighbours-setup.js'
import type {
  FromSteady,
  SteadyPlan,
  SteadyRates,
  SteadyResult,
  Timings,
  ToSteady,
} from '../neighbours-steady.js'
import { UsageError } from '../options.js'
import { formatTable } from '../report.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'
import { REPO_ROOT } from '../servers.js'

/**
 * One agency cannot slow the others. Two instances as `npm start` runs them (API only, as
 * README's Deploying runs them, beside `npm run worker` processes), on PostgreSQL and Redis, and two accounts.
 * B works at a steady everyday rate, first alone ("quiet"), then while A floods ("flooded"): 10,000 review
 * requests scheduled at once, 200,000 delivery events, 5,000 lead captures, API calls at ten times its
 * budget, 200 room messages a second. Reported for B, quiet against flooded: API p99, the wait of each of
 * its jobs from due to start, socket delivery p99; for A, that all its work completed, once.
 */

// The targets.
const RATIO_TARGET = 1.25
const JOB_WAIT_P99_TARGET_MS = 2_000

// The issue's flood, at --scale 1.
const FLOOD = { reviews: 10_000, events: 200_000, leads: 5_000, messagesPerSecond: 200 }
const EVENTS_PER_BATCH = 1_000
const API_TIMES_BUDGET = 10
// A's chat: 40 members in 20 rooms of ten (each member in 5), each room's members sending in turn: 10 messages a
// second a room and 5 a member at 200 a second, under the per-user room limit of 600 a minute.
const A_MEMBERS = 40
const A_ROOMS = 20
const A_ROOM_SIZE = 10
const A_LEAD_PAGES = 4
const A_RECORDS = 10_000
const B_RECORDS = 300
const B_RECEIVERS = 3
const FLOOD_CONNECTIONS = 4
const POLL_MS = 1_000
// After the flooded phase: how long the queues get to drain (B's last jobs, or A's rest) before counting.
const DRAIN_MS = 120_000

/** B's everyday work, a second. */
const B_RATES: SteadyRates = {
  reads: 4,
  writes: 1,
  reviews: 1,
  eventBatches: 1,
  eventsPerBatch: 20,
  messages: 2,
}

// The service's default budget (ACCOUNT_REQUEST_BUDGET, ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS), for a
// release that sends no RateLimit-Policy.
const DEFAULT_BUDGET = { requests: 6_000, windowSeconds: 60 }
// An integration looping on the API keeps this many calls in flight at most.
const A_API_IN_FLIGHT = 64

const DEFAULTS = { scale: 1, 'quiet-seconds': 30, 'flood-seconds': 300, workers: 2, budget: 0 }
const LIMITS = { scale: 1, 'quiet-seconds': 300, 'flood-seconds': 420, workers: 8, budget: 1_000_000 }
type Flag = keyof typeof DEFAULTS

function flagValue(values: Record<string, string | undefined>, flag: Flag): number {
  const raw = values[flag]
  if (raw === undefined) return DEFAULTS[flag]
  const value = Number(raw)
  const integer = flag !== 'scale'
  if (!Number.isFinite(value) || value <= 0 || value > LIMITS[flag] || (integer && !Number.isInteger(value)))
    throw new UsageError(
      `--${flag} must be ${integer ? 'an integer' : 'a number'} above 0 and at most ${LIMITS[flag]}`,
    )
  return value
}

interface Shape {
  scale: number
  quietSeconds: number
  floodSeconds: number
  workers: number
  /** A's own API budget (requests a window) set through the admin API; undefined leaves the service's default. */
  budget: number | undefined
}

const shapeOf = (values: Record<string, string | undefined>): Shape => ({
  scale: flagValue(values, 'scale'),
  quietSeconds: flagValue(values, 'quiet-seconds'),
  floodSeconds: flagValue(values, 'flood-seconds'),
  workers: flagValue(values, 'workers'),
  budget: values.budget === undefined ? undefined : flagValue(values, 'budget'),
})

/** B's steady load in its own process (neighbours-steady-process.ts). */
class SteadyProcess {
  private readonly child: Child
  private readonly messages: FromSteady[] = []
  constructor() {
    this.child = startNode('neighbours-b', ['--import', 'tsx', 'bench/neighbours-steady-process.ts'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH },
    })
    this.child.process.on('message', (message: FromSteady) => this.messages.push(message))
  }
  tell(message: ToSteady) {
    this.child.process.send(message)
  }
  async next<K extends FromSteady['kind']>(
    kind: K,
    timeoutMs: number,
  ): Promise<Extract<FromSteady, { kind: K }>> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const failed = this.messages.find((m) => m.kind === 'failed')
      if (failed?.kind === 'failed') throw new Error(`B's load failed: ${failed.error}`)
      const found = this.messages.find((m) => m.kind === kind)
      if (found) return found as Extract<FromSteady, { kind: K }>
      if (this.child.hasExited()) throw new Error(`B's load exited:\n${this.child.output()}`)
      if (Date.now() > deadline)
        throw new Error(`B's load did not answer "${kind}" in time:\n${this.child.output()}`)
      await delay(20)
    }
  }
  stop() {
    return stopChild(this.child)
  }
}

/** A's budget as the service counts it: `q` requests in `w` seconds, from RateLimit-Policy. */
interface Budget {
  requests: number
  windowSeconds: number
  /** How it was found, in words. */
  source: string
}

const policyOf = (header: string | null) => {
  const q = header?.match(/\bq=(\d+)/)?.[1]
  const w = header?.match(/\bw=(\d+)/)?.[1]
  return q && w ? { requests: Number(q), windowSeconds: Number(w) } : undefined
}

/**
 * Sets A's own request budget through the admin API when `--budget` asks for one, then reads the budget A's
 * requests count against from an answer's RateLimit-Policy. A release without budgets sends none: the
 * flag's value, or the default's figures, then only set the rate of A's calls.
 */
async function budgetOf(
  target: Target,
  a: { accountId: string; token: string },
  requested: number | undefined,
): Promise<Budget> {
  if (requested !== undefined) {
    const response = await fetch(
      new URL(`/v1/admin/accounts/${a.accountId}/request-budget`, target.baseUrl),
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${target.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ requests: requested }),
      },
    )
    const text = await response.text()
    if (!response.ok && response.status !== 404)
      throw new Error(`PUT /v1/admin/accounts/:id/request-budget answered ${response.status}: ${text}`)
  }
  const answer = await fetch(new URL('/v1/contacts?limit=1', target.baseUrl), {
    headers: { authorization: `Bearer ${a.token}` },
  })
  await answer.arrayBuffer()
  const policy = policyOf(answer.headers.get('ratelimit-policy'))
  if (policy) return { ...policy, source: `RateLimit-Policy "${answer.headers.get('ratelimit-policy')}"` }
  return {
    requests: requested ?? DEFAULT_BUDGET.requests,
    windowSeconds: DEFAULT_BUDGET.windowSeconds,
    source: "no RateLimit-Policy in this release (no budget): the figure only sets the rate of A's calls",
  }
}

const ms = (value: number) => (value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(1)} ms`)
const ratio = (flooded: number, quiet: number) => (quiet > 0 ? flooded / quiet : Number.POSITIVE_INFINITY)
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL')
const statuses = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ') || 'none'

function waitRow(label: string, figures: WaitFigures): string[] {
  return [
    label,
    String(figures.jobs),
    ms(figures.p50Ms),
    ms(figures.p99Ms),
    ms(figures.maxMs),
    String(figures.notStarted),
    Object.entries(figures.byQueue)
      .map(([name, q]) => `${name} ${q.jobs}: p99 ${ms(q.p99Ms)}`)
      .join('; '),
  ]
}

const timingRow = (label: string, quiet: Timings, flooded: Timings) => [
  label,
  String(quiet.count),
  ms(quiet.p50Ms),
  ms(quiet.p99Ms),
  String(flooded.count),
  ms(flooded.p50Ms),
  ms(flooded.p99Ms),
  ratio(flooded.p99Ms, quiet.p99Ms).toFixed(2),
]

/** How often each expected recipient got a message at the fake SendGrid. */
function mailCounts(expected: string[]): { once: number; missing: number; duplicated: number } {
  const times = new Map<string, number>()
  for (const message of providersOfRun().sendgrid.messages.values())
    for (const p of message.body.personalizations)
      for (const to of p.to) times.set(to.email, (times.get(to.email) ?? 0) + 1)
  const of = (email: string) => times.get(email) ?? 0
  return {
    once: expected.filter((email) => of(email) === 1).length,
    missing: expected.filter((email) => of(email) === 0).length,
    duplicated: expected.filter((email) => of(email) > 1).length,
  }
}

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  const shape = shapeOf(options.flags)
  const instances = (target.instances ?? [target]).map((instance) => instance.baseUrl)
  const providers = providersOfRun()
  const db = new pg.Pool({ connectionString: providers.databaseUrl, max: 2 })
  const runId = randomBytes(4).toString('hex')
  const flood = {
    reviews: Math.max(1, Math.round(FLOOD.reviews * shape.scale)),
    events: Math.max(1, Math.round(FLOOD.events * shape.scale)),
    leads: Math.max(1, Math.round(FLOOD.leads * shape.scale)),
    messagesPerSecond: Math.max(1, Math.round(FLOOD.messagesPerSecond * shape.scale)),
  }
  const steady = new SteadyProcess()
  const log = (line: string) => console.error(`bench: ${line}`)
  try {
    log(`starting ${shape.workers} worker process(es) as npm run worker runs them`)
    const workers = await startWorkers(shape.workers, target.baseUrl)
    log('preparing accounts A and B through the admin and account APIs')
    const b = await reviewingAccount(target, `neighbour B ${runId}`, 100_000)
    const bRoom = await roomOf(target, b, B_RECEIVERS, 'B team')
    const bRecords = await insertRecords(db, b.accountId, B_RECORDS)
    const a = await reviewingAccount(target, `neighbour A ${runId}`, flood.reviews + 1_000)
    const aMembers = await membersOf(target, a, A_MEMBERS)
    const aRooms = []
    for (let r = 0; r < A_ROOMS; r++) {
      const members = Array.from(
        { length: A_ROOM_SIZE },
        (_, i) => aMembers[(r * 2 + i) % A_MEMBERS] as Member,
      )
      aRooms.push(await roomWith(target, members, `A room ${r}`))
    }
    const aRecords = await insertRecords(db, a.accountId, A_RECORDS)
    const pages = await leadPages(target, db, a, A_LEAD_PAGES)
    const budget = await budgetOf(target, a, shape.budget)
    const floodRates = {
      ...flood,
      apiPerSecond: (shape.scale * API_TIMES_BUDGET * budget.requests) / budget.windowSeconds,
    }

    const plan: SteadyPlan = {
      instances,
      runId,
      accountId: b.accountId,
      token: b.token,
      receivers: bRoom.members
        .slice(1)
        .map((member, i) => ({ token: member.token, instance: i % instances.length })),
      roomId: bRoom.id,
      stripeSecret: providers.stripeSecret,
      eventKeyPem: providers.eventKeyPem,
      records: bRecords,
      uid: b.userId,
      rates: B_RATES,
    }
    steady.tell({ kind: 'plan', plan })
    await steady.next('ready', 60_000)

    const machineBefore = sampleMachine()
    const quietFrom = Date.now()
    log(`quiet: B alone for ${shape.quietSeconds} s`)
    steady.tell({ kind: 'phase', phase: 'quiet' })
    await delay(shape.quietSeconds * 1000)

    const floodFrom = Date.now()
    log(
      `flooded: A posts ${flood.reviews} charges, ${flood.events} delivery events, ${flood.leads} leads, ` +
        `${floodRates.apiPerSecond.toFixed(0)} API calls/s and ${flood.messagesPerSecond} messages/s (for at most ${shape.floodSeconds} s)`,
    )
    steady.tell({ kind: 'phase', phase: 'flooded' })
    const running = await startFlood({
      instances,
      runId,
      accountId: a.accountId,
      token: a.token,
      stripeSecret: providers.stripeSecret,
      eventKeyPem: providers.eventKeyPem,
      leadsAppSecret: providers.leadsAppSecret,
      records: aRecords,
      uid: a.userId,
      reviews: flood.reviews,
      events: flood.events,
      eventsPerBatch: EVENTS_PER_BATCH,
      leads: flood.leads,
      leadPages: pages,
      apiRate: floodRates.apiPerSecond,
      apiInFlight: A_API_IN_FLIGHT,
      messageRate: flood.messagesPerSecond,
      rooms: aRooms,
      connections: FLOOD_CONNECTIONS,
    })
    let posted = false
    void running.posted.then(() => {
      posted = true
    })
    const aCharges = `evt_${runId}_a_`
    const floodDeadline = floodFrom + shape.floodSeconds * 1000
    let backlog = await backlogOf(db, a.accountId, aCharges, flood.leads)
    let lastLog = Date.now()
    while (!(posted && drained(backlog)) && Date.now() < floodDeadline) {
      await delay(POLL_MS)
      backlog = await backlogOf(db, a.accountId, aCharges, flood.leads)
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now()
        log(
          `flooded ${((Date.now() - floodFrom) / 1000).toFixed(0)} s: posted ${posted ? 'all' : 'not yet all'}; A's backlog: ` +
            `${backlog.events} charges, ${backlog.requests} requests to send, ${backlog.batches} event batches, ${backlog.leads} leads`,
        )
      }
    }
    const floodTo = Date.now()
    const aDrainedInFlood = posted && drained(backlog)
    steady.tell({ kind: 'stop' })
    const [floodResult, steadyResult] = await Promise.all([
      running.stop(),
      steady.next('done', 60_000).then((m) => m.result),
    ])
    const machineAfter = sampleMachine()

    // Bounded: whatever is still queued (B's last jobs, A's rest when the phase ended first) gets DRAIN_MS.
    const bCharges = `evt_${runId}_b_`
    const drainDeadline = Date.now() + DRAIN_MS
    for (;;) {
      backlog = await backlogOf(db, a.accountId, aCharges, floodResult.leads.accepted)
      const bJobs = await jobTimesOf(db, b.accountId, bCharges)
      const bPending = await backlogOf(db, b.accountId, bCharges, 0)
      if (
        (drained(backlog) && drained(bPending) && bJobs.every((job) => job.startedAt !== null)) ||
        Date.now() > drainDeadline
      )
        break
      await delay(POLL_MS)
    }
    const drainedAt = Date.now()
    const jobs = await jobTimesOf(db, b.accountId, bCharges)
    const quietWaits = waitsOf(jobs, quietFrom, floodFrom, drainedAt)
    const floodedWaits = waitsOf(jobs, floodFrom, floodTo, drainedAt)
    const aResults = await resultsOf(
      db,
      a.accountId,
      aCharges,
      `${runId}-a-`,
      aRooms.map((room) => room.id),
    )
    const bResults = await resultsOf(db, b.accountId, bCharges, `${runId}-b-`, [bRoom.id])
    for (const worker of workers) await stopChild(worker)
    return report({
      shape,
      flood: floodRates,
      budget,
      steady: steadyResult,
      floodResult,
      quietWaits,
      floodedWaits,
      aResults,
      bResults,
      aDrainedInFlood,
      backlog,
      times: { quietFrom, floodFrom, floodTo, drainedAt },
      load: loadLine(machineBefore, machineAfter),
      instances: instances.length,
    })
  } finally {
    await steady.stop()
    await db.end()
  }
}

interface ReportInput {
  shape: Shape
  flood: { reviews: number; events: number; leads: number; messagesPerSecond: number; apiPerSecond: number }
  budget: Budget
  steady: SteadyResult
  floodResult: FloodResult
  quietWaits: WaitFigures
  floodedWaits: WaitFigures
  aResults: Awaited<ReturnType<typeof resultsOf>>
  bResults: Awaited<ReturnType<typeof resultsOf>>
  aDrainedInFlood: boolean
  backlog: Awaited<ReturnType<typeof backlogOf>>
  times: { quietFrom: number; floodFrom: number; floodTo: number; drainedAt: number }
  load: string
  instances: number
}

function report(input: ReportInput): Measured {
  const { steady, floodResult: f, aResults: ar, flood, shape } = input
  const quiet = steady.phases.quiet
  const flooded = steady.phases.flooded
  const aMail = mailCounts(f.customers)
  const bMail = mailCounts(steady.customers)
  // What A's providers had acknowledged (answered 200) must all be done, once; what was refused for good
  // (retries given up) is lost too. Posts not made when the flooded phase was cut are reported, not judged.
  const charges = f.reviews.accepted
  const leads = f.leads.accepted
  const aComplete =
    f.reviews.givenUp + f.leads.givenUp + f.events.givenUp === 0 &&
    ar.chargeEvents === charges &&
    ar.chargesProcessed === charges &&
    ar.requests === charges &&
    ar.notOneRequest === 0 &&
    ar.requestsSent === charges &&
    aMail.once === charges &&
    ar.deliveryEvents === f.events.events &&
    ar.leadsStored === leads &&
    ar.leadsDistinct === leads &&
    ar.leadsCaptured === leads &&
    ar.leadContacts === leads &&
    // A message whose answer was lost (a timeout) may be stored all the same: at least every 201, none twice.
    ar.roomMessages >= (f.messages.statuses['201'] ?? 0) &&
    ar.roomMessages === ar.roomMessagesDistinct
  const floodedFailures = Object.values(flooded.failures).reduce((a, b) => a + b, 0)
  const bComplete =
    bMail.once === steady.customers.length &&
    bMail.duplicated === 0 &&
    // A batch whose answer timed out may be stored all the same: at least every event answered 200.
    input.bResults.deliveryEvents >= steady.events
  const apiRatio = ratio(flooded.requests.api.p99Ms, quiet.requests.api.p99Ms)
  const socketRatio = ratio(flooded.sockets.p99Ms, quiet.sockets.p99Ms)
  const targets = {
    api: apiRatio <= RATIO_TARGET,
    sockets: socketRatio <= RATIO_TARGET,
    jobs: input.floodedWaits.jobs > 0 && input.floodedWaits.p99Ms < JOB_WAIT_P99_TARGET_MS,
    aLost: aComplete,
    bServed: floodedFailures === 0,
  }
  const quietFailures = Object.values(quiet.failures).reduce((a, b) => a + b, 0)
  // Refused or lost work of B's, or doubled work of anyone's: the figures are not valid. B's requests refused
  // while A floods are the neighbour's harm: they fail a target of their own.
  const failed =
    quietFailures > 0 ||
    !bComplete ||
    quiet.socketsMissed + flooded.socketsMissed > 0 ||
    quiet.socketsDuplicated + flooded.socketsDuplicated > 0 ||
    aMail.duplicated > 0 ||
    steady.dropped > 0
  const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(0)} s`
  const { quietFrom, floodFrom, floodTo, drainedAt } = input.times
  return {
    failed,
    passed: !failed && Object.values(targets).every(Boolean),
    lines: [
      `${input.instances} API instances (RUN_WORKERS=false) and ${shape.workers} worker process(es) (npm run worker), ` +
        'sharing PostgreSQL and Redis; fake SendGrid and Graph in the bench process; B driven from a process of its own',
      `B, a second: ${B_RATES.reads} contact lists, ${B_RATES.writes} contact created, ${B_RATES.reviews} Stripe charge ` +
        `(a review request due at once), ${B_RATES.eventBatches} SendGrid batch of ${B_RATES.eventsPerBatch} events, ` +
        `${B_RATES.messages} room messages to ${B_RECEIVERS} members on sockets (both instances)`,
      `A (--scale ${shape.scale}): ${flood.reviews} charges, ${flood.events} delivery events in batches of ${EVENTS_PER_BATCH}, ` +
        `${flood.leads} lead events, ${flood.apiPerSecond.toFixed(1)} contact lists/s at most ${A_API_IN_FLIGHT} in flight ` +
        `(${API_TIMES_BUDGET} × A's budget of ${input.budget.requests} requests in ${input.budget.windowSeconds} s: ${input.budget.source}), ${flood.messagesPerSecond} messages/s into ${A_ROOMS} rooms of ${A_ROOM_SIZE} of its ${A_MEMBERS} members, all on sockets`,
      `phases: quiet ${seconds(quietFrom, floodFrom)}, flooded ${seconds(floodFrom, floodTo)} ` +
        `(${input.aDrainedInFlood ? "until A's work was all done" : `cut at --flood-seconds ${shape.floodSeconds}, A not done`}), ` +
        `then ${seconds(floodTo, drainedAt)} for the queues to drain`,
      '',
      formatTable([
        ['B', 'quiet n', 'p50', 'p99', 'flooded n', 'p50', 'p99', 'p99 ×'],
        timingRow('API (reads and writes)', quiet.requests.api, flooded.requests.api),
        timingRow('  contact list', quiet.requests.read, flooded.requests.read),
        timingRow('  contact create', quiet.requests.write, flooded.requests.write),
        timingRow(
          'review webhook (200)',
          quiet.requests['review webhook'],
          flooded.requests['review webhook'],
        ),
        timingRow(
          'delivery events (200)',
          quiet.requests['delivery events'],
          flooded.requests['delivery events'],
        ),
        timingRow('room message (201)', quiet.requests['room message'], flooded.requests['room message']),
        timingRow('socket delivery', quiet.sockets, flooded.sockets),
      ]),
      'socket delivery: from the send to message:new at each other member',
      '',
      formatTable([
        ["B's jobs: due to started", 'jobs', 'p50', 'p99', 'max', 'not started', 'by queue'],
        waitRow('quiet', input.quietWaits),
        waitRow('flooded', input.floodedWaits),
      ]),
      "from pg-boss's job tables (pgboss.job and .archive on pg-boss 10, jobs.job on 12): started_on − greatest(start_after, created_on), by the phase the job became due in; " +
        'a job never started counts until the end of the drain',
      '',
      `B's failures: quiet ${statuses(quiet.failures)}; flooded ${statuses(flooded.failures)}; sockets missed ` +
        `${quiet.socketsMissed + flooded.socketsMissed}, duplicated ${quiet.socketsDuplicated + flooded.socketsDuplicated}, dropped ${steady.dropped}`,
      ...Object.entries(steady.samples).map(([kind, body]) => `  first ${kind}: ${body}`),
      `B's work: review emails ${bMail.once} once of ${steady.customers.length} (missing ${bMail.missing}, twice ${bMail.duplicated}); ` +
        `delivery events stored ${input.bResults.deliveryEvents} of ${steady.events} answered 200`,
      '',
      `A's posts, answered in ${f.postedSeconds.toFixed(1)} s (each retried up to 10 times, as the providers retry; not sent: still to post when the flooded phase ended): ` +
        posts('charges', f.reviews),
      `  ${posts('lead events', f.leads)}; ${posts(`batches of ${EVENTS_PER_BATCH} events`, f.events)}`,
      `A's API calls: ${f.api.sent} (not sent, ${A_API_IN_FLIGHT} in flight: ${f.api.skipped}), ${statuses(f.api.statuses)}; with RateLimit ${f.api.rateLimitHeaders}, Retry-After ${f.api.retryAfter}`,
      `A's messages: ${f.messages.sent}, ${statuses(f.messages.statuses)}; message:new received by A's members ${f.messages.delivered}`,
      `A's work: charges stored ${ar.chargeEvents}, processed ${ar.chargesProcessed} of ${charges} accepted; review requests ${ar.requests}, ` +
        `sent ${ar.requestsSent}, charges not scheduling exactly one ${ar.notOneRequest}; emails once ${aMail.once} ` +
        `(missing ${aMail.missing}, twice ${aMail.duplicated})`,
      `  delivery events stored ${ar.deliveryEvents} of ${f.events.events} accepted; leads stored ${ar.leadsStored} (distinct ${ar.leadsDistinct}), ` +
        `captured ${ar.leadsCaptured} into ${ar.leadContacts} contacts of ${leads} accepted; room messages stored ${ar.roomMessages} (distinct ${ar.roomMessagesDistinct}) ` +
        `of ${f.messages.statuses['201'] ?? 0} answered 201`,
      `  left at the end: ${input.backlog.events} charges, ${input.backlog.requests} requests, ${input.backlog.batches} batches, ${input.backlog.leads} leads`,
      '',
      `${verdict(targets.api)}  B's API p99 flooded/quiet ${apiRatio.toFixed(2)} (target <= ${RATIO_TARGET})`,
      `${verdict(targets.sockets)}  B's socket delivery p99 flooded/quiet ${socketRatio.toFixed(2)} (target <= ${RATIO_TARGET})`,
      `${verdict(targets.jobs)}  B's job start wait p99 during A's flood ${ms(input.floodedWaits.p99Ms)} (target < ${ms(JOB_WAIT_P99_TARGET_MS)})`,
      `${verdict(targets.bServed)}  B refused nothing during A's flood (${floodedFailures} refused or failed)`,
      `${verdict(targets.aLost)}  nothing of A's lost: every charge, delivery event, lead and message done, once`,
      `quiet and flooded: ${input.load}`,
    ],
  }
}

const posts = (label: string, p: Posted) =>
  `${label} ${p.accepted} of ${p.posts} accepted in ${p.seconds.toFixed(1)} s (given up ${p.givenUp}, not sent ${p.notSent}; answers ${statuses(p.statuses)})`

export const neighbours: MeasuredScenario = {
  description:
    "a noisy neighbour: account B's everyday work alone, then while account A floods jobs, webhooks, the API and rooms",
  requiresPostgres: true,
  instances: 2,
  serverEnv: startProviders,
  flags: {
    names: ['scale', 'quiet-seconds', 'flood-seconds', 'workers', 'budget'],
    usage:
      '--postgres [--scale 0.1] [--quiet-seconds 30] [--flood-seconds 300] [--workers 2] [--budget REQUESTS_A_WINDOW]',
    check: (values) => shapeOf(values),
  },
  measure,
}
