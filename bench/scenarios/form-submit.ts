import pg from 'pg'
import { newId } from '../../src/platform/db/ids.js'
import { createMember } from '../admin.js'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadAverage } from '../report.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'

const SUBMIT_PATH = '/v1/funnels/forms/submit'
const SUBMIT_TARGET = 2_000
const DEFAULT_SUBMITS = 20_000
// Untimed posts first, so that V8 has optimised the path and the pools are open before the clock starts.
const WARMUP = 1_000
// One in ten posts is a person already known: the contact is updated instead of created.
const RETURNING_EVERY = 10

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

/** The posts of a lead form: name, email, phone and a message; every tenth person came before. */
function submissions(funnel: { funnelId: string; stepId: string }, count: number, offset: number) {
  return Array.from({ length: count }, (_, i): EachRequest => {
    const n = offset + i
    const person = n % RETURNING_EVERY === RETURNING_EVERY - 1 ? n - RETURNING_EVERY + 1 : n
    return {
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
    }
  })
}

const answered = (sent: SentEach, status: number) => sent.answers.filter((a) => a.status === status).length
const bad = (sent: SentEach, expected: number) =>
  sent.errors > 0 || sent.answers.length !== expected || answered(sent, 201) !== expected

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('form-submit needs the server on PostgreSQL (--postgres)')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const { accountId } = await createMember(target)
    const funnel = await seedFunnel(db, accountId)
    const count = options.requests ?? DEFAULT_SUBMITS
    const url = new URL(SUBMIT_PATH, target.baseUrl).toString()
    const loadBefore = loadAverage()
    const warm = await postEach(url, 'application/json', submissions(funnel, WARMUP, 0), options.connections)
    const sent = await postEach(
      url,
      'application/json',
      submissions(funnel, count, WARMUP),
      options.connections,
    )
    const loadAfter = loadAverage()
    const expected = WARMUP + count
    const { rows } = await db.query<{ submissions: string; linked: string; contacts: string }>(
      `select (select count(*) from funnel_form_submissions where funnel_id = $1) as submissions,
              (select count(*) from funnel_form_submissions where funnel_id = $1 and contact_id is not null) as linked,
              (select count(*) from contacts where account_id = $2) as contacts`,
      [funnel.funnelId, accountId],
    )
    const stored = Number(rows[0]?.submissions)
    const linked = Number(rows[0]?.linked)
    const people = Number(rows[0]?.contacts)
    const expectedPeople = expected - Math.floor(expected / RETURNING_EVERY)
    const failed =
      bad(warm, WARMUP) ||
      bad(sent, count) ||
      stored !== expected ||
      linked !== expected ||
      people !== expectedPeople
    const rate = count / sent.seconds
    const others = count - answered(sent, 201)
    return {
      passed: !failed && rate >= SUBMIT_TARGET,
      failed,
      lines: [
        `${WARMUP} submissions untimed, then ${count} timed, on ${options.connections} connections; one in ${RETURNING_EVERY} from a person already a contact`,
        '',
        `submit (answered 201: stored, contact created or updated, announced): ${count} in ${sent.seconds.toFixed(2)} s   ` +
          `${rate.toFixed(0)}/s   p50 ${sent.p50Ms.toFixed(1)} ms, p99 ${sent.p99Ms.toFixed(1)} ms   ` +
          `not 201: ${others}, connection errors ${sent.errors}   target >= ${SUBMIT_TARGET}/s`,
        '',
        `submissions stored ${stored} of ${expected}, ${linked} with their contact; contacts ${people} of ${expectedPeople}`,
        `load average (1, 5, 15 min) before ${loadBefore}, after ${loadAfter}`,
      ],
    }
  } finally {
    await db.end()
  }
}

/** Lead-form posts to one funnel page, each creating or updating the account's contact. */
export const formSubmit: MeasuredScenario = {
  description: `POST ${SUBMIT_PATH}: a lead form (name, email, phone, message) into the account's contacts`,
  requiresPostgres: true,
  serverEnv,
  measure,
}
