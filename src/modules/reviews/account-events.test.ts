import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import type { Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import {
  putConfiguration,
  REVIEW_CONFIGURATION,
  requestsOf,
  reviewingTenant,
  storedEvents,
  waitForRequests,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

let sequence = 0
const report = (t: TestApp, tenant: Tenant, payload: object, prefix = '/reviews') =>
  t.app.inject({ method: 'POST', url: `${prefix}/events`, headers: tenant.headers, payload })

/** An event of the tenant's own systems about a customer reachable by email. */
function accountEvent(trigger: string, overrides: object = {}) {
  sequence++
  return {
    trigger,
    event_id: `visit-${sequence}`,
    customer: { name: 'Ada Lovelace', email: `ada${sequence}@example.com` },
    ...overrides,
  }
}

const outcomeOf = (t: TestApp, eventId: string) =>
  eventually(async () => {
    const event = (await storedEvents(t, 'source=account')).find((e) => e.event_id.endsWith(`:${eventId}`))
    expect(event?.status).not.toBe('received')
    return event
  })

describe('POST /reviews/events', () => {
  test.for(['service_delivered', 'appointment_finished', 'custom_event'])(
    'a %s event schedules a request when it is the configuration trigger',
    async (trigger, { t }) => {
      const tenant = await reviewingTenant(t, { trigger, delay_hours: 0 })
      const event = accountEvent(trigger)
      const response = await report(t, tenant, event, '/v1/reviews')
      expect(response.statusCode).toBe(202)
      expect(response.json()).toMatchObject({
        success: true,
        data: { event_id: event.event_id, trigger, status: 'received' },
      })
      const [request] = await waitForRequests(t, tenant, 1)
      expect(request).toMatchObject({
        status: expect.stringMatching(/^(scheduled|sent)$/),
        platform: 'google',
        source_ref: `event:${event.event_id}`,
        customer: { name: 'Ada Lovelace', email: event.customer.email, phone: null },
      })
      expect(await outcomeOf(t, event.event_id)).toMatchObject({ status: 'processed', reason: null })
    },
  )

  test('another trigger than the configuration schedules nothing (trigger_mismatch)', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered' })
    const event = accountEvent('appointment_finished')
    expect((await report(t, tenant, event)).statusCode).toBe(202)
    expect(await outcomeOf(t, event.event_id)).toMatchObject({
      status: 'skipped',
      reason: 'trigger_mismatch',
    })
    expect(await requestsOf(t, tenant)).toEqual([])
  })

  test('a repeated event_id answers 200 with the stored event and is applied once', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'custom_event' })
    const event = accountEvent('custom_event')
    const first = await report(t, tenant, event)
    await waitForRequests(t, tenant, 1)
    const again = await report(t, tenant, { ...event, customer: { email: 'someone-else@example.com' } })
    expect(again.statusCode).toBe(200)
    expect(again.json().data).toMatchObject({ _id: first.json().data._id, status: 'processed' })
    expect(await requestsOf(t, tenant)).toHaveLength(1)
  })

  test("event ids are the account's own: another account's same id is its own event", async ({
    t,
    stranger,
  }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered' })
    const event = accountEvent('service_delivered')
    await putConfiguration(t, stranger, { ...REVIEW_CONFIGURATION, trigger: 'service_delivered' })
    const own = await report(t, tenant, event)
    const theirs = await report(t, stranger, event)
    expect([own.statusCode, theirs.statusCode]).toEqual([202, 202])
    expect(theirs.json().data._id).not.toBe(own.json().data._id)
    await waitForRequests(t, tenant, 1)
    await waitForRequests(t, stranger, 1)
    expect((await requestsOf(t, stranger))[0]?.source_ref).toBe(`event:${event.event_id}`)
  })

  test('order_value is compared with min_order_value in minor units', async ({ t }) => {
    const tenant = await reviewingTenant(t, {
      trigger: 'service_delivered',
      conditions: { min_order_value: 10_000 },
    })
    const small = accountEvent('service_delivered', { order_value: 9_999, currency: 'usd' })
    await report(t, tenant, small)
    expect(await outcomeOf(t, small.event_id)).toMatchObject({ reason: 'below_min_order_value' })
    const large = accountEvent('service_delivered', { order_value: 10_000, currency: 'usd' })
    await report(t, tenant, large)
    expect(await outcomeOf(t, large.event_id)).toMatchObject({ status: 'processed' })
  })

  test('refuses a wrong trigger, field by field, and stores nothing', async ({ t, owner }) => {
    const before = await storedEvents(t, 'source=account')
    const wrongTrigger = await report(t, owner, accountEvent('order_shipped'))
    expect(wrongTrigger.statusCode).toBe(400)
    expect(wrongTrigger.json()).toMatchObject({ success: false, message: 'Invalid trigger type' })
    const cases: [object, string][] = [
      [{ event_id: '' }, 'event_id'],
      [{ customer: { email: 'not-an-email' } }, 'email'],
      [{ customer: { phone: '555-0100' } }, 'phone'],
      [{ order_value: -1 }, 'order_value'],
      [{ order_value: 1e20 }, 'order_value'],
      [{ currency: 'dollars' }, 'currency'],
      [{ customer: undefined }, 'customer'],
    ]
    for (const [overrides, field] of cases) {
      const response = await report(t, owner, accountEvent('custom_event', overrides))
      expect(response.statusCode, field).toBe(400)
      expect(response.json().message).toContain(field)
    }
    expect(await storedEvents(t, 'source=account')).toEqual(before)
  })

  test('needs a token with reviews.write', async ({ t }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/reviews/events',
      payload: accountEvent('custom_event'),
    })
    expect(response.statusCode).toBe(401)
  })
})
