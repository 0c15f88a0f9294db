import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * Jobs shared fairly between accounts: every job that works for an account carries it (pg-boss's
 * job group), and the operator sees per queue the waiting and active jobs by account (`GET /v1/admin/jobs`).
 */

const rowsOf = async <T>(t: TestApp, query: ReturnType<typeof sql>) =>
  (await t.database.handle.db.execute(query)) as unknown as { rows: T[] }

/** The group (account) or the group's tier of the jobs of queue `name` whose data's `field` is `value`. */
const jobsGroup = async (
  t: TestApp,
  column: 'group_id' | 'group_tier',
  [name, field, value]: [string, string, string],
) =>
  (
    await rowsOf<{ value: string | null }>(
      t,
      sql`select ${sql.identifier(column)} as value from jobs.job where name = ${name} and data ->> ${field} = ${value}`,
    )
  ).rows.map((row) => row.value)
const groupsOf = (t: TestApp, name: string, field: string, value: string) =>
  jobsGroup(t, 'group_id', [name, field, value])
const tiersOf = (t: TestApp, name: string, field: string, value: string) =>
  jobsGroup(t, 'group_tier', [name, field, value])

/** A custom event the account reports (`POST /reviews/events`); its id. */
async function reportEvent(t: TestApp, tenant: Tenant): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/events',
    headers: tenant.headers,
    payload: {
      trigger: 'custom_event',
      event_id: `visit-${randomBytes(4).toString('hex')}`,
      customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    },
  })
  expect(response.statusCode, response.body).toBe(202)
  return response.json().data._id as string
}

describe('the account of a job queued by a route', () => {
  test("a SendGrid batch's job counts against the account most of its events name", async ({ t }) => {
    const [owner, other] = [await createTenant(t.app), await createTenant(t.app)]
    const event = (accountId: string) => ({
      email: 'recipient@example.com',
      timestamp: 1_700_000_000,
      event: 'delivered',
      sg_event_id: `ev-${randomBytes(8).toString('hex')}`,
      account_id: accountId,
    })
    const posted = await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/webhook',
      payload: [event(other.accountId), event(owner.accountId), event(owner.accountId)],
    })
    expect(posted.statusCode).toBe(200)
    const [batch] = (
      await rowsOf<{ id: string }>(
        t,
        sql`select id from mail_event_batches order by received_at desc limit 1`,
      )
    ).rows
    expect(await groupsOf(t, 'email.delivery-events', 'batch_id', String(batch?.id))).toEqual([
      owner.accountId,
    ])
  })

  test("an account's reported review event is processed as the account's job", async ({ t }) => {
    const tenant = await createTenant(t.app)
    const eventId = await reportEvent(t, tenant)
    await eventually(async () =>
      expect(await groupsOf(t, 'reviews.webhook-event', 'event_id', eventId)).toEqual([tenant.accountId]),
    )
  })

  test("carries its account's tier, read without its enqueuer saying it: the tier weighs the job's share", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { tier: 'enterprise' })
    const eventId = await reportEvent(t, tenant)
    await eventually(async () =>
      expect(await tiersOf(t, 'reviews.webhook-event', 'event_id', eventId)).toEqual(['enterprise']),
    )
  })
})

describe('GET /v1/admin/jobs', () => {
  const jobQueues = (t: TestApp, query = '', headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ url: `/v1/admin/jobs${query}`, headers })

  test('lists per queue its jobs by state and the accounts holding most of them, at most `top`', async ({
    t,
  }) => {
    const [busy, quiet] = [await createTenant(t.app), await createTenant(t.app)]
    // Removal jobs of the subusers of two accounts, due in an hour: waiting, and never run by the test.
    const inAnHour = new Date(Date.now() + 3_600_000)
    const queue = (accountId: string, n: number) =>
      t.app.platform.queue.enqueue(
        t.database.handle.db,
        'email.remove-subuser',
        { account_id: accountId, username: `subuser-${n}` },
        { startAfter: inAnHour },
      )
    for (let n = 0; n < 3; n++) await queue(busy.accountId, n)
    await queue(quiet.accountId, 3)

    const response = await jobQueues(t, '?top=1')
    expect(response.statusCode, response.body).toBe(200)
    const queues = response.json().data.queues as {
      queue: string
      scheduled: number
      top_waiting: object[]
    }[]
    expect(queues.map((q) => q.queue)).toContain('email.delivery-events')
    const removals = queues.find((q) => q.queue === 'email.remove-subuser')
    expect(removals).toMatchObject({
      scheduled: 4,
      active: 0,
      top_waiting: [{ account: busy.accountId, jobs: 3 }],
      top_active: [],
    })
    const all = (await jobQueues(t)).json().data.queues as typeof queues
    expect(all.find((q) => q.queue === 'email.remove-subuser')?.top_waiting).toEqual([
      { account: busy.accountId, jobs: 3 },
      { account: quiet.accountId, jobs: 1 },
    ])
  })

  test('refuses a `top` out of bounds naming it, and any caller without the admin token', async ({ t }) => {
    for (const top of ['0', '101', 'many']) {
      const response = await jobQueues(t, `?top=${top}`)
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toContain('top')
    }
    const tenant = await createTenant(t.app)
    expect((await jobQueues(t, '', tenant.headers)).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/v1/admin/jobs' })).statusCode).toBe(401)
  })
})
