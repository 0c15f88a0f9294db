import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { anId, createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  createReviewTemplate,
  expectWrittenToCallerOnly,
  putConfiguration,
  setReviewLink,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

const full = {
  enabled: true,
  trigger: 'order_completed',
  delay_hours: 2,
  platforms: ['google', 'facebook'],
  conditions: {
    min_order_value: 1000,
    exclude_refunded: true,
    customer_segment: 'all',
    exclude_repeated: false,
  },
  send_method: 'email',
  from_email: 'reviews@shop.example',
  from_phone: '+14155550100',
}

let events = 0
/** An event of the tenant's own systems (`POST /reviews/events`), stored at once. */
async function reportEvent(t: TestApp, tenant: Tenant, trigger: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/events',
    headers: tenant.headers,
    payload: { trigger, event_id: `warning-${++events}`, customer: { email: 'ada@example.com' } },
  })
  expect(response.statusCode).toBe(202)
}

describe('auto review request configuration', () => {
  test('answers an empty list before any configuration', async ({ t }) => {
    const fresh = await createTenant(t.app)
    const response = await t.app.inject({ url: '/reviews/auto-review-request', headers: fresh.headers })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      success: true,
      data: { configs: [], pagination: { page: 0, limit: 10, total: 0 } },
    })
  })

  test('creates the configuration with every field as sent, then replaces it (upsert)', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const created = await putConfiguration(t, tenant, full)
    expect(created.statusCode).toBe(200)
    expect(created.json()).toMatchObject({
      success: true,
      data: {
        _id: anId,
        account_id: tenant.accountId,
        parentAccount: tenant.accountId,
        ...full,
        template_id: null,
        timezone: 'UTC',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
    const changed = await putConfiguration(
      t,
      tenant,
      { ...full, enabled: false, delay_hours: 0 },
      '/v1/reviews',
    )
    expect(changed.json().data).toMatchObject({
      ...full,
      _id: created.json().data._id,
      enabled: false,
      delay_hours: 0,
    })
    const listed = await t.app.inject({ url: '/v1/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data).toMatchObject({ configs: [{ enabled: false }], pagination: { total: 1 } })
  })

  test("refuses with the spec's messages and stores nothing", async ({ t }) => {
    const tenant = await createTenant(t.app)
    const refusals: [object, number, string | RegExp][] = [
      [{ ...full, trigger: 'payment_made' }, 400, 'Invalid trigger type'],
      [{ ...full, platforms: ['google', 'myspace'] }, 400, /myspace/],
      [{ ...full, delay_hours: -1 }, 400, 'Delay hours must be positive'],
      [{ ...full, template_id: '0123456789abcdef01234567' }, 404, 'Template not found'],
      [{ ...full, template_id: 'not-an-id' }, 404, 'Template not found'],
      [{ ...full, send_method: 'fax' }, 400, /^send_method must be one of/],
      [{ ...full, conditions: { customer_segment: 'gold' } }, 400, /^conditions\.customer_segment/],
      [{ ...full, conditions: { min_order_value: -5 } }, 400, /^conditions\.min_order_value/],
      [{ ...full, timezone: 'Mars/Olympus' }, 400, /^timezone/],
      [{ ...full, send_window: { start: '25:00', end: '20:00' } }, 400, /^send_window\.start/],
      [{ ...full, from_email: 'nope' }, 400, /^from_email/],
    ]
    for (const [body, status, message] of refusals) {
      const response = await putConfiguration(t, tenant, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(status)
      expect(response.json().success).toBe(false)
      expect(response.json().message).toMatch(message)
    }
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data.pagination.total).toBe(0)
  })

  test('a PUT replaces the configuration: what it leaves out is absent afterwards', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const template = await createReviewTemplate(t, tenant)
    const everything = {
      ...full,
      name: 'Bakery reviews',
      template_id: template,
      follow_up: { enabled: true, delay_hours: 72 },
      send_window: { start: '09:00', end: '20:00' },
      timezone: 'Europe/Paris',
    }
    expect((await putConfiguration(t, tenant, everything)).statusCode).toBe(200)
    // The new user's case: a service_delivered configuration no longer keeps min_order_value from before.
    const required = {
      enabled: true,
      trigger: 'service_delivered',
      delay_hours: 1,
      platforms: ['yelp'],
      send_method: 'sms',
    }
    const replaced = await putConfiguration(t, tenant, required)
    expect(replaced.statusCode).toBe(200)
    const absent = {
      name: 'Auto review request',
      template_id: null,
      conditions: {},
      from_email: null,
      from_phone: null,
      follow_up: null,
      send_window: null,
      timezone: 'UTC',
    }
    expect(replaced.json().data).toMatchObject({ ...required, ...absent })
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data.configs).toEqual([expect.objectContaining({ ...required, ...absent })])
  })

  test('requires the five fields the spec marks required: a 400 naming the one missing', async ({ t }) => {
    const tenant = await createTenant(t.app)
    for (const field of ['enabled', 'trigger', 'delay_hours', 'platforms', 'send_method']) {
      const { [field]: _left, ...rest } = full as Record<string, unknown>
      const response = await putConfiguration(t, tenant, rest)
      expect(response.statusCode, field).toBe(400)
      expect(response.json()).toMatchObject({ success: false, message: `${field} is required` })
    }
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data.pagination.total).toBe(0)
  })

  test("any trigger but the spec's four answers 'Invalid trigger type', any delay but a number from 0 'Delay hours must be positive'", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const triggers = [42, null, true, ['order_completed'], { value: 'order_completed' }, 'x'.repeat(1000), '']
    for (const trigger of triggers) {
      const response = await putConfiguration(t, tenant, { ...full, trigger })
      expect(response.statusCode, JSON.stringify(trigger)).toBe(400)
      expect(response.json().message).toBe('Invalid trigger type')
    }
    for (const delay_hours of ['24', null, false, [1], { hours: 1 }, -0.5]) {
      const response = await putConfiguration(t, tenant, { ...full, delay_hours })
      expect(response.statusCode, JSON.stringify(delay_hours)).toBe(400)
      expect(response.json().message).toBe('Delay hours must be positive')
    }
    const tooLong = await putConfiguration(t, tenant, { ...full, delay_hours: 8761 })
    expect(tooLong.json()).toMatchObject({ success: false, message: 'delay_hours must be at most 8760' })
  })

  test("a body leaving out required fields still answers a wrong trigger, platform or delay in the spec's words", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const refusals: [object, string][] = [
      [{ trigger: 'invalid_trigger' }, 'Invalid trigger type'],
      [{ enabled: true, trigger: 7 }, 'Invalid trigger type'],
      [
        { platforms: ['google', 'myspace'] },
        'Invalid platform: myspace. Allowed: google, facebook, yelp, trustpilot',
      ],
      [{ delay_hours: -1 }, 'Delay hours must be positive'],
      [{ trigger: 'order_completed', delay_hours: -5 }, 'Delay hours must be positive'],
      [{ trigger: 'order_completed' }, 'enabled is required'],
    ]
    for (const [body, message] of refusals) {
      const response = await putConfiguration(t, tenant, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json(), JSON.stringify(body)).toMatchObject({ success: false, errno: 400, message })
    }
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data.pagination.total).toBe(0)
  })

  test('a refused PUT leaves the earlier configuration as it was', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const saved = (await putConfiguration(t, tenant, full)).json().data
    const refused: object[] = [
      { ...full, trigger: 'service_delivered', platforms: ['myspace'] },
      { ...full, trigger: 'service_delivered', delay_hours: -1 },
      { ...full, trigger: 'service_delivered', template_id: '0123456789abcdef01234567' },
      { trigger: 'service_delivered' },
    ]
    for (const body of refused)
      expect((await putConfiguration(t, tenant, body)).statusCode).toBeGreaterThan(399)
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: tenant.headers })
    expect(listed.json().data.configs).toEqual([saved])
  })

  test('each account writes and reads its own configuration', async ({ t, bystander, stranger }) => {
    await expectWrittenToCallerOnly(
      t,
      { method: 'PUT', url: '/reviews/auto-review-request', payload: { ...full, name: 'Bystander reviews' } },
      { method: 'GET', url: '/v1/reviews/auto-review-request' },
      bystander,
      stranger,
      'Bystander reviews',
    )
  })

  test("refuses another account's template as not found", async ({ t, owner, stranger }) => {
    const theirs = await createReviewTemplate(t, stranger)
    const response = await putConfiguration(t, owner, { ...full, template_id: theirs })
    expect(response.statusCode).toBe(404)
    expect(response.json().message).toBe('Template not found')
    const mine = await createReviewTemplate(t, owner)
    expect((await putConfiguration(t, owner, { ...full, template_id: mine })).json().data.template_id).toBe(
      mine,
    )
  })

  test('warns about platforms without a review link, and saves them', async ({ t }) => {
    const tenant = await createTenant(t.app)
    await setReviewLink(t, tenant, 'google', 'https://g.page/r/shop/review')
    const response = await putConfiguration(t, tenant, { ...full, platforms: ['google', 'yelp'] })
    expect(response.statusCode).toBe(200)
    expect(response.json().data.platforms).toEqual(['google', 'yelp'])
    const linkWarnings = response.json().warnings.filter((w: string) => w.startsWith('No review link'))
    expect(linkWarnings).toEqual([expect.stringMatching(/^No review link for yelp/)])
  })

  test('warns about a trigger nothing sends yet, until an event of it is reported', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const configuration = { ...full, trigger: 'appointment_finished' }
    const before = await putConfiguration(t, tenant, configuration)
    expect(before.statusCode).toBe(200)
    expect(before.json().warnings).toContain(
      'No appointment_finished event was ever reported for this account: payments and orders only report ' +
        'order_completed, so appointment_finished comes only from your own systems, by POST /reviews/events ' +
        'with "trigger": "appointment_finished"; until one is, no request is scheduled',
    )
    await reportEvent(t, tenant, 'appointment_finished')
    const after = await putConfiguration(t, tenant, configuration)
    expect(after.json().warnings.filter((w: string) => w.includes('appointment_finished'))).toEqual([])
  })

  test('warns that nothing sends order_completed without Stripe, Square or an order reported', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const before = await putConfiguration(t, tenant, full)
    // This server has neither STRIPE_WEBHOOK_SECRET nor SQUARE_WEBHOOK_SIGNATURE_KEY.
    expect(before.json().warnings).toContain(
      'Nothing sends order_completed for this account yet: this server receives no Square orders ' +
        '(SQUARE_WEBHOOK_SIGNATURE_KEY is unset), this server receives no Stripe payments (STRIPE_WEBHOOK_SECRET ' +
        'is unset), and no order was reported by POST /reviews/events; until one does, no request is scheduled',
    )
    await reportEvent(t, tenant, 'order_completed')
    const after = await putConfiguration(t, tenant, full)
    expect(after.json().warnings.filter((w: string) => w.includes('order_completed'))).toEqual([])
  })

  test('warns that a send window starting when it ends is read as open all day', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const allDay = await putConfiguration(t, tenant, {
      ...full,
      send_window: { start: '09:00', end: '09:00' },
    })
    expect(allDay.statusCode).toBe(200)
    expect(allDay.json().warnings).toContain(
      'send_window starts and ends at 09:00: that is read as open all day, so no request is held; leave ' +
        'send_window out to send at any hour, or give the hours requests may go out (an end before the start ' +
        'spans midnight)',
    )
    const hours = await putConfiguration(t, tenant, {
      ...full,
      send_window: { start: '21:00', end: '08:00' },
    })
    expect(hours.json().warnings.filter((w: string) => w.startsWith('send_window'))).toEqual([])
  })

  test('takes the follow-up, send window and time zone', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const extras = {
      follow_up: { enabled: true, delay_hours: 72 },
      send_window: { start: '09:00', end: '20:00' },
      timezone: 'Europe/Paris',
    }
    const response = await putConfiguration(t, tenant, { ...full, ...extras })
    expect(response.json().data).toMatchObject(extras)
  })

  test("a sub-account without its own reads its parent's, and its own once it has one", async ({
    t,
    owner,
    subAccount,
  }) => {
    await putConfiguration(t, owner, full)
    const inherited = await t.app.inject({ url: '/reviews/auto-review-request', headers: subAccount.headers })
    expect(inherited.json().data.configs).toEqual([expect.objectContaining({ account_id: owner.accountId })])
    const own = await putConfiguration(t, subAccount, { ...full, platforms: ['trustpilot'] })
    expect(own.json().data).toMatchObject({
      account_id: subAccount.accountId,
      parentAccount: owner.accountId,
    })
    const listed = await t.app.inject({ url: '/reviews/auto-review-request', headers: subAccount.headers })
    expect(listed.json().data.configs).toEqual([
      expect.objectContaining({ account_id: subAccount.accountId, platforms: ['trustpilot'] }),
    ])
  })

  test("pages with the spec's rule: page 0 and 1 start at the first", async ({ t }) => {
    const tenant = await createTenant(t.app)
    await putConfiguration(t, tenant, full)
    const page = (query: string) =>
      t.app.inject({ url: `/reviews/auto-review-request?${query}`, headers: tenant.headers })
    expect((await page('page=0&limit=1')).json().data.configs).toHaveLength(1)
    expect((await page('page=1&limit=1&sort_by=name&order=asc')).json().data.configs).toHaveLength(1)
    const second = (await page('page=2&limit=1')).json().data
    expect(second).toEqual({ configs: [], pagination: { page: 2, limit: 1, total: 1 } })
    expect((await page('sort_by=rating')).statusCode).toBe(400)
    expect((await page('order=sideways')).statusCode).toBe(400)
  })

  test('needs a token', async ({ t }) => {
    expect((await t.app.inject({ url: '/reviews/auto-review-request' })).statusCode).toBe(401)
    expect(
      (await t.app.inject({ method: 'PUT', url: '/v1/reviews/auto-review-request', payload: full }))
        .statusCode,
    ).toBe(401)
  })
})
