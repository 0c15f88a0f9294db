import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { eventually } from '../../../test/helpers/jobs.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import { insertReviewEvents, storedEvents, stripePost } from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { REQUEUE_RECEIVED_EVENTS_JOB } from './jobs.js'

const SECRET = 'whsec_test_operator_view'
test.override('appEnv', { STRIPE_WEBHOOK_SECRET: SECRET })

const charge = (id: string, metadata: object) => ({
  id,
  amount: 1200,
  currency: 'usd',
  status: 'succeeded',
  metadata: { customer_email: 'kept@example.com', ...metadata },
})

describe('GET /v1/admin/reviews/webhook-events', () => {
  test('a payment without account_id is kept as failed, with its reason and payload, for the operator', async ({
    t,
    owner,
  }) => {
    await t.app.inject(stripePost(SECRET, charge('ch_without_account', {})))
    await t.app.inject(stripePost(SECRET, charge('ch_unconfigured', { account_id: owner.accountId })))
    await eventually(async () =>
      expect((await storedEvents(t)).map((e) => e.status).sort()).toEqual(['failed', 'skipped']),
    )
    const failed = await t.app.inject({
      url: '/v1/admin/reviews/webhook-events?status=failed',
      headers: adminHeaders,
    })
    expect(failed.statusCode).toBe(200)
    expect(failed.json()).toMatchObject({
      success: true,
      data: [
        {
          source: 'paymentprovider',
          event_id: 'ch_without_account',
          type: 'charge',
          account_id: null,
          status: 'failed',
          reason: 'missing_account_id',
          payload: { id: 'ch_without_account', metadata: { customer_email: 'kept@example.com' } },
          processed_at: expect.any(String),
        },
      ],
      pagination: { total: 1, page: 1, limit: 20, pages: 1 },
    })
    const bySource = await t.app.inject({
      url: '/v1/admin/reviews/webhook-events?source=orderprovider',
      headers: adminHeaders,
    })
    expect(bySource.json().data).toEqual([])
  })

  test('is the operator view: refused without the admin token, a bad filter is a 400', async ({
    t,
    owner,
  }) => {
    const url = '/v1/admin/reviews/webhook-events'
    expect((await t.app.inject({ url })).statusCode).toBe(401)
    expect((await t.app.inject({ url, headers: owner.headers })).statusCode).toBe(401)
    const bad = await t.app.inject({ url: `${url}?status=lost`, headers: adminHeaders })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('status')
  })

  test('an event stored without its job (the process stopped in between) is queued again and applied', async ({
    t,
    owner,
  }) => {
    const { db, queue } = t.app.platform
    // As a post leaves it when the process stops after storing the event, before queueing its job.
    const payload = JSON.stringify(charge('ch_job_lost', { account_id: owner.accountId }))
    await db.execute(sql`
      insert into review_webhook_events (id, source, event_id, type, account_id, payload, created_at)
      values ('0123456789abcdef01234567', 'paymentprovider', 'ch_job_lost', 'charge', ${owner.accountId},
        ${payload}::jsonb, now() - interval '2 minutes')`)
    await queue.enqueue(db, REQUEUE_RECEIVED_EVENTS_JOB, {})
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === 'ch_job_lost')).toEqual({
        event_id: 'ch_job_lost',
        status: 'skipped',
        reason: 'no_configuration',
      }),
    )
  })

  test("walks every account's events with cursors, a filter kept; counts up to the cap", async ({ t }) => {
    const url = '/v1/admin/reviews/webhook-events'
    await insertReviewEvents(t, '00c0', 20, null)
    const newestFirst = async (status: string) => {
      const { rows } = (await t.app.platform.db.execute(sql`select id from review_webhook_events
        where status = ${status} order by created_at desc, id desc`)) as unknown as { rows: { id: string }[] }
      return rows.map((row) => row.id)
    }
    await expectCursorWalk(
      t.app,
      `${url}?status=processed`,
      adminHeaders,
      await newestFirst('processed'),
      () => insertReviewEvents(t, '00c2', 1, null, sql`now()`).then(() => undefined),
    )
    expect(await walkWithCursors(t.app, `${url}?status=skipped`, adminHeaders, 3)).toEqual(
      await newestFirst('skipped'),
    )
    await expectListRefusals(t.app, url, adminHeaders, 100)
    await insertReviewEvents(t, '00c1', LIST_TOTAL_CAP, null)
    await expectCappedTotal(t.app, url, adminHeaders, 100)
  })
})
