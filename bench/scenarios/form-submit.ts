import pg from 'pg'
import { newId } from '../../src/platform/db/ids.js'
import { createMember } from '../admin.js'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadLine, sampleMachine } from '../machine.js'
import {
  meetsSqlTarget,
  planSql,
  requestInputs,
  routeAgainstSql,
  type SqlPlan,
  type SqlSide,
  sqlFailed,
  sqlLines,
} from '../route-vs-sql.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'

export const SUBMIT_PATH = '/v1/funnels/forms/submit'
const SUBMIT_TARGET = 2_000
const DEFAULT_SUBMITS = 20_000
// Untimed posts first, so that V8 has optimised the path and the pools are open before the clock starts.
const WARMUP = 1_000
// One in ten posts is a person already known: the contact is updated instead of created.
const RETURNING_EVERY = 10
// The people of the SQL-only replays: far past the route's (--requests is at most 100,000).
const REPLAY_OFFSET = 1_000_000
const SQL_TARGET = 0.5

// Every post comes from 127.0.0.1: the per-IP limit (60 a minute) is lifted for the run.
const serverEnv = { RATE_LIMIT_FORMS_PER_MINUTE: '1000000000' }

/** A live funnel of the account with one step, as the builder leaves it. */
async function seedFunnel(db: pg.Pool, accountId: string): Promise<{ funnelId: string; stepId: string }> {
  const funnelId = newId()
  const stepId = newId()
  await db.query(
    `insert into funnels (id, account_id, name, base_path, status) values ($1, $2, 'Bench funnel', '/bench', 'active')`,
    [funnelId, accountId],
  )
  await db.query(
    `insert into funnel_steps (id, account_id, funnel_id, name, path, "order") values ($1, $2, $3, 'Opt-in', '/optin', 0)`,
    [stepId, accountId, funnelId],
  )
  return { funnelId, stepId }
}

export interface Funnel {
  funnelId: string
  stepId: string
}

/** The `n`-th post of a lead form, by `person`: name, email, phone and a message. */
export const submission = (funnel: Funnel, n: number, person: number): EachRequest => ({
  body: JSON.stringify({
    funnel_id: funnel.funnelId,
    step_id: funnel.stepId,
    form_id: 'lead-form',
    visitor_id: `visitor-${n}`,
    fields: {
      first_name: 'Bench',
      last_name: `Person ${person}`,
      email: `person-${person}@bench.example`,
      phone: `+1 555 ${String(n).padStart(7, '0')}`,
      message: 'I would like to hear more about the spring offer.',
      _hp: '',
    },
  }),
})

/** Whether the `n`-th post comes from a person already a contact (the one nine posts before). */
const returning = (n: number) => n % RETURNING_EVERY === RETURNING_EVERY - 1
export const personOf = (n: number) => (returning(n) ? n - RETURNING_EVERY + 1 : n)

/** `count` posts from the `offset`-th; every tenth person came before. */
const submissions = (funnel: Funnel, count: number, offset: number) =>
  Array.from({ length: count }, (_, i) => submission(funnel, offset + i, personOf(offset + i)))

/**
 * The route's SQL replayed without the server: posts by people of their own (from REPLAY_OFFSET, never
 * posted to the server), new and returning as the route's; recorded from three new and three returning posts.
 */
function sqlSide(funnel: Funnel, url: string, count: number, connections: number): SqlSide {
  const recordedFrom = WARMUP + count
  // A returning replay posts as a person of the warm-up: were it the person nine replays before, as the
  // route's, both might be in flight at once, and the replay cannot branch as the server does.
  const replays = Array.from({ length: WARMUP + count }, (_, i) => {
    const n = REPLAY_OFFSET + i
    return returning(n)
      ? { kind: 'returning', request: submission(funnel, n, personOf(i % WARMUP)) }
      : { kind: 'new', request: submission(funnel, n, n) }
  })
  return {
    url,
    contentType: 'application/json',
    recorded: {
      new: [0, 1, 2].map((i) => submission(funnel, recordedFrom + i, recordedFrom + i)),
      // People 0, 1 and 2 posted in the warm-up.
      returning: [0, 1, 2].map((i) => submission(funnel, recordedFrom + 3 + i, i)),
    },
    inputs: requestInputs,
    replays,
    warmupReplays: WARMUP,
    connections,
  }
}

const answered = (sent: SentEach, status: number) => sent.answers.filter((a) => a.status === status).length
const bad = (sent: SentEach, expected: number) =>
  sent.errors > 0 || sent.answers.length !== expected || answered(sent, 201) !== expected

/** How many of the posts from the `offset`-th, `count` of them, come from a new person. */
const newPeople = (offset: number, count: number) =>
  Array.from({ length: count }, (_, i) => offset + i).filter((n) => !returning(n)).length

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('form-submit needs the server on PostgreSQL (--postgres)')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  let plan: SqlPlan | undefined
  try {
    const { accountId } = await createMember(target)
    const funnel = await seedFunnel(db, accountId)
    const count = options.requests ?? DEFAULT_SUBMITS
    const url = new URL(SUBMIT_PATH, target.baseUrl).toString()
    const send = (requests: EachRequest[]) => postEach(url, 'application/json', requests, options.connections)
    const warm = await send(submissions(funnel, WARMUP, 0))
    plan = await planSql(target, sqlSide(funnel, url, count, options.connections))
    const before = sampleMachine([target.pid])
    const compared = await routeAgainstSql(submissions(funnel, count, WARMUP), send, plan)
    const after = sampleMachine([target.pid])
    const sent = compared.route
    // Every post the server answered, the recorded ones included, and every replay of its SQL, each wrote a
    // submission; each new person, a contact (three of the recorded ones).
    const replays = plan ? WARMUP + count : 0
    const expected = WARMUP + count + (plan?.recorded.requests ?? 0) + replays
    const expectedPeople = newPeople(0, WARMUP + count) + (plan ? 3 + newPeople(REPLAY_OFFSET, replays) : 0)
    const { rows } = await db.query<{ submissions: string; linked: string; contacts: string }>(
      `select (select count(*) from funnel_form_submissions where funnel_id = $1) as submissions,
              (select count(*) from funnel_form_submissions where funnel_id = $1 and contact_id is not null) as linked,
              (select count(*) from contacts where account_id = $2) as contacts`,
      [funnel.funnelId, accountId],
    )
    const stored = Number(rows[0]?.submissions)
    const linked = Number(rows[0]?.linked)
    const people = Number(rows[0]?.contacts)
    const failed =
      bad(warm, WARMUP) ||
      bad(sent, count) ||
      sqlFailed(compared) ||
      stored !== expected ||
      linked !== expected ||
      people !== expectedPeople
    const rate = count / sent.seconds
    const others = count - answered(sent, 201)
    return {
      passed: !failed && rate >= SUBMIT_TARGET && meetsSqlTarget(compared, SQL_TARGET),
      failed,
      lines: [
        `${WARMUP} submissions untimed, then ${count} timed, on ${options.connections} connections; one in ${RETURNING_EVERY} from a person already a contact`,
        '',
        `submit (answered 201: stored, contact created or updated, announced): ${count} in ${sent.seconds.toFixed(2)} s   ` +
          `${rate.toFixed(0)}/s   p50 ${sent.p50Ms.toFixed(1)} ms, p99 ${sent.p99Ms.toFixed(1)} ms   ` +
          `not 201: ${others}, connection errors ${sent.errors}   target >= ${SUBMIT_TARGET}/s`,
        ...sqlLines(compared, plan, SQL_TARGET),
        '',
        `submissions stored ${stored} of ${expected}, ${linked} with their contact; contacts ${people} of ${expectedPeople}` +
          (plan ? ' (the replays of the SQL included)' : ''),
        loadLine(before, after),
      ],
    }
  } finally {
    await plan?.end()
    await db.end()
  }
}

/** Lead-form posts to one funnel page, each creating or updating the account's contact. */
export const formSubmit: MeasuredScenario = {
  description: `POST ${SUBMIT_PATH}: a lead form (name, email, phone, message) into the account's contacts`,
  requiresPostgres: true,
  serverEnv,
  replaysSql: true,
  measure,
}
