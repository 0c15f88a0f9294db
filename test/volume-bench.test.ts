import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stopEverything } from '../bench/children.js'
import { seedVolume } from '../bench/seed-volume.js'
import {
  DELIVERY_EVENTS_PER_POST,
  isOperatorRoute,
  jobsDone,
  ROUTES,
  type Scale,
  sendOnce,
  startProviders,
  volumeAccounts,
} from '../bench/volume-routes.js'
import { listenTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/app.js'

// The bench measures PostgreSQL databases the volume seed filled; the embedded database is not seeded.
describe.runIf(process.env.DATABASE_URL)("npm run bench:volume's routes, on a seeded database", () => {
  let t: TestApp & { baseUrl: string }
  let scale: Scale
  const startedAt = new Date()

  beforeAll(async () => {
    const providers = await startProviders()
    t = await listenTestApp(providers.env)
    const url = t.database.url as string
    await seedVolume(url, { scale: 0.001 })
    const db = new pg.Pool({ connectionString: url, max: 2 })
    const target = {
      baseUrl: t.baseUrl,
      adminToken: TEST_ADMIN_TOKEN,
      databaseUrl: url,
      databasePoolSize: t.config.databasePoolSize,
    }
    const accounts = await volumeAccounts(target, db)
    scale = { target, db, providers, accounts, load: { connections: 2, durationSeconds: 2 } }
  }, 120_000)

  afterAll(async () => {
    await scale?.db.end()
    await t?.close()
    await stopEverything()
  })

  /** Rows of `table` the account got during this test (the seed's all lie before 2026-11-01). */
  const added = async (table: string, accountId: string, where = 'true', time = 'created_at') => {
    const { rows } = await scale.db.query(
      `select count(*)::int as n from ${table} where account_id = $1 and ${time} >= $2 and ${where}`,
      [accountId, startedAt],
    )
    return rows[0].n as number
  }

  it('answers each route 2xx for the largest account and a small one, and its writes do their work', async () => {
    expect(scale.accounts.map((a) => [a.label, a.name])).toEqual([
      ['largest', 'Agency 0'],
      ['small', 'Account 5'],
    ])
    const answers: string[] = []
    for (const route of ROUTES) {
      for (const account of isOperatorRoute(route) ? [undefined] : scale.accounts) {
        const request = isOperatorRoute(route)
          ? await route.prepare(scale)
          : await route.prepare(scale, account as Scale['accounts'][number])
        const { status, body } = await sendOnce(t.baseUrl, request)
        answers.push(`${route.name} (${account?.label ?? 'operator'}): ${status} ${status < 300 ? '' : body}`)
      }
    }
    expect(answers.filter((answer) => !/: 2\d\d $/.test(answer))).toEqual([])
    expect(answers).toHaveLength(2 * ROUTES.length - 1)

    // What each write stands for was done: the bench does not measure refusals or shortcuts.
    expect(await jobsDone(scale.db)).toBe(true)
    for (const { accountId } of scale.accounts) {
      expect(await added('communications', accountId, `module = 'SENDGRID'`)).toBe(1)
      // Threaded to the seeded emails they are about, as SendGrid's message ids are.
      expect(await added('communication_events', accountId, 'communication_id is not null')).toBe(
        DELIVERY_EVENTS_PER_POST,
      )
      expect(
        await added('funnel_form_submissions', accountId, 'contact_id is not null', 'submitted_at'),
      ).toBe(1)
      expect(await added('leads', accountId, `status = 'captured'`)).toBe(1)
      expect(await added('review_requests', accountId)).toBe(1)
      expect(await added('oauth_audit_events', accountId, `event = 'token.refreshed'`)).toBe(1)
    }
  }, 120_000)
})
