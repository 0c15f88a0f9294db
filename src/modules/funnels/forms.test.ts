import { randomBytes } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { anId, contactsOf, contactsWithEmail, createTenant } from '../../../test/helpers/fixtures.js'
import { FUNNELS, seedFunnel, softDeleteFunnel } from '../../../test/helpers/funnels.js'
import { randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { stepCacheOf } from './step-cache.js'
import { funnelFormSubmissions } from './tables.js'

// Low, so that the limit is reached in a test; every other test posts from an address of its own.
test.override('appEnv', { RATE_LIMIT_FORMS_PER_MINUTE: '5' })

// Fresh addresses each run: with Redis the counts outlive the test.
const hex = () => randomBytes(2).toString('hex')
const freshIp = () => `2001:db8::${hex()}:${hex()}`

const SUBMIT = `${FUNNELS}/forms/submit`
const submit = (t: TestApp, payload: object, ip = freshIp(), userAgent = 'Mozilla/5.0 (Test)') =>
  t.app.inject({
    method: 'POST',
    url: SUBMIT,
    payload,
    remoteAddress: ip,
    headers: { 'user-agent': userAgent },
  })

const submissionsOf = (t: TestApp, funnelId: string) =>
  t.app.platform.db.select().from(funnelFormSubmissions).where(eq(funnelFormSubmissions.funnelId, funnelId))

describe('form submission', () => {
  test('keeps the fields with the IP, user agent and visitor, in the funnel’s account', async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const stepId = stepIds[0] as string
    const ip = freshIp()
    const response = await submit(
      t,
      { funnel_id: funnelId, step_id: stepId, form_id: 'optin', fields: { note: 'hi' }, visitor_id: 'v-1' },
      ip,
      'Mozilla/5.0 (Macintosh)',
    )
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body).toEqual({
      success: true,
      message: 'SUCCESS',
      data: { _id: anId, submitted_at: expect.any(String) },
    })
    expect(await submissionsOf(t, funnelId)).toEqual([
      expect.objectContaining({
        id: body.data._id,
        accountId: owner.accountId,
        stepId,
        formId: 'optin',
        fields: { note: 'hi' },
        visitorId: 'v-1',
        ipAddress: ip,
        userAgent: 'Mozilla/5.0 (Macintosh)',
        contactId: null,
        submittedAt: new Date(body.data.submitted_at),
      }),
    ])
  })

  test('refuses a malformed funnel id (400), an unknown or deleted funnel and a step not in it (404)', async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const other = await seedFunnel(t.app, owner)
    const post = (funnel_id: string, step_id = stepIds[0]) =>
      submit(t, { funnel_id, step_id, form_id: 'f', fields: { email: 'a@example.com' } })
    const refused = async (call: ReturnType<typeof post>, status: number, message: string) => {
      const response = await call
      expect(response.statusCode).toBe(status)
      expect(response.json()).toEqual({ success: false, errno: status, message })
    }
    await refused(post('not-an-id'), 400, 'Invalid funnel ID')
    await refused(post(newId()), 404, 'Funnel not found')
    await refused(post(funnelId, other.stepIds[0]), 404, 'Step not found')
    await refused(post(funnelId, newId()), 404, 'Step not found')
    const malformedStep = await post(funnelId, 'step-1')
    expect(malformedStep.statusCode).toBe(400)
    expect(malformedStep.json().message).toMatch(/^step_id /)
    await softDeleteFunnel(t.app, other.funnelId)
    await refused(post(other.funnelId, other.stepIds[0]), 404, 'Funnel not found')
    expect(await submissionsOf(t, funnelId)).toEqual([])
    expect(await submissionsOf(t, other.funnelId)).toEqual([])
  })

  test('refuses posts to a funnel deleted after it took some', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const payload = { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields: { a: 'b' } }
    expect((await submit(t, payload)).statusCode).toBe(201)
    // As the funnel's delete does: the write, then the step cache told.
    await softDeleteFunnel(t.app, funnelId)
    stepCacheOf(t.app.platform).forgetFunnel(funnelId)
    const refused = await submit(t, payload)
    expect(refused.statusCode).toBe(404)
    expect(refused.json().message).toBe('Funnel not found')
    expect(await submissionsOf(t, funnelId)).toHaveLength(1)
  })

  test('takes at most 50 fields, each a string of at most 10 kB, naming the field', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const post = (fields: Record<string, unknown>) =>
      submit(t, { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields })
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`q${i}`, 'yes']))
    const tooMany = await post({ ...fifty, q50: 'yes' })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json().message).toMatch(/^fields /)
    // 10,240 bytes: 5,120 two-byte characters.
    const refused = [
      [{ message: 'é'.repeat(5_121) }, 'fields.message must be at most 10240 bytes'],
      [{ name: 'Ada', age: 36 }, 'fields.age must be a string'],
      [{ tags: ['a'] }, 'fields.tags must be a string'],
      [{ other: null }, 'fields.other must be a string'],
    ] as const
    for (const [fields, message] of refused) {
      const response = await post(fields)
      expect(response.statusCode, message).toBe(400)
      expect(response.json().message).toBe(message)
    }
    expect(await submissionsOf(t, funnelId)).toEqual([])
    expect((await post(fifty)).statusCode).toBe(201)
    expect((await post({ message: 'é'.repeat(5_120) })).statusCode).toBe(201)
    expect(await submissionsOf(t, funnelId)).toHaveLength(2)
  })

  test('answers a filled honeypot like any submission and keeps nothing', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const post = (hp: string, email: string) =>
      submit(t, { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields: { email, _hp: hp } })
    const caught = await post('http://spam.example', 'bot@example.com')
    expect(caught.statusCode).toBe(201)
    expect(caught.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: { _id: anId, submitted_at: expect.any(String) },
    })
    expect(await submissionsOf(t, funnelId)).toEqual([])
    expect(await contactsWithEmail(t.app, owner, 'bot@example.com')).toEqual([])
    // Left empty, as people leave it: kept, without the honeypot.
    expect((await post('', 'person@example.com')).statusCode).toBe(201)
    expect((await submissionsOf(t, funnelId)).map((row) => row.fields)).toEqual([
      { email: 'person@example.com' },
    ])
  })

  test('limits posts per IP address, answering 429 past the limit', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const payload = { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields: { a: 'b' } }
    const ip = freshIp()
    for (let i = 0; i < 5; i++) expect((await submit(t, payload, ip)).statusCode).toBe(201)
    const limited = await submit(t, payload, ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, errno: 429 })
    expect(limited.headers['access-control-allow-origin']).toBe('*')
    expect((await submit(t, payload, freshIp())).statusCode).toBe(201)
    expect(await submissionsOf(t, funnelId)).toHaveLength(6)
  })

  test('is open to posts from any origin, and no other funnel route is', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const origin = 'https://pages.example.com'
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: SUBMIT,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    })
    expect(preflight.statusCode).toBe(204)
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type',
    })
    const posted = await t.app.inject({
      method: 'POST',
      url: SUBMIT,
      remoteAddress: freshIp(),
      headers: { origin },
      payload: { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields: {} },
    })
    expect(posted.statusCode).toBe(201)
    expect(posted.headers['access-control-allow-origin']).toBe('*')
    const refused = await submit(t, { funnel_id: 'nope', step_id: stepIds[0], form_id: 'f', fields: {} })
    expect(refused.headers['access-control-allow-origin']).toBe('*')

    const list = await t.app.inject({
      url: `${FUNNELS}/${funnelId}/forms`,
      headers: { ...owner.headers, origin },
    })
    expect(list.statusCode).toBe(200)
    expect(list.headers['access-control-allow-origin']).toBeUndefined()
    const otherPreflight = await t.app.inject({
      method: 'OPTIONS',
      url: `${FUNNELS}/${funnelId}/forms`,
      headers: { origin, 'access-control-request-method': 'GET' },
    })
    expect(otherPreflight.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('form submission into contacts', () => {
  const announced: RecordChange[] = []
  test.beforeAll(({ t }) => {
    t.app.platform.changes.listen(async (_tx, change) => {
      announced.push(change)
    })
  })

  test('creates the contact from an email, then updates it, announcing both', async ({ t, subAccount }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, subAccount)
    const post = (fields: Record<string, string>) =>
      submit(t, { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields })
    announced.length = 0

    const first = await post({ 'First Name': 'Grace', last_name: 'Hopper', Email: 'grace@example.com' })
    expect(first.statusCode).toBe(201)
    const [contact] = await contactsOf(t.app, subAccount)
    expect(contact).toMatchObject({ email: 'grace@example.com', name: 'Grace Hopper', phone: '' })
    expect(announced).toEqual([
      expect.objectContaining({
        event: 'contact.created',
        account_id: subAccount.accountId,
        data: expect.objectContaining({
          _id: contact?._id,
          email: 'grace@example.com',
          name: 'Grace Hopper',
        }),
      }),
    ])

    const second = await post({ email: 'GRACE@example.com', phone_number: '+1 555 0100', message: 'Call me' })
    expect(second.statusCode).toBe(201)
    expect(await contactsOf(t.app, subAccount)).toEqual([
      expect.objectContaining({ _id: contact?._id, name: 'Grace Hopper', phone: '+1 555 0100' }),
    ])
    expect(announced.map((change) => change.event)).toEqual(['contact.created', 'contact.updated'])
    expect(announced[1]?.data).toMatchObject({ _id: contact?._id, phone: '+1 555 0100' })

    // Nothing new about the person: nothing announced.
    expect((await post({ email: 'grace@example.com', full_name: 'Grace Hopper' })).statusCode).toBe(201)
    expect(announced).toHaveLength(2)
    const kept = await submissionsOf(t, funnelId)
    expect(kept.map((row) => row.contactId)).toEqual([contact?._id, contact?._id, contact?._id])
  })

  test('finds the contact by phone without an email; an invalid email alone makes none', async ({
    t,
    bystander,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, bystander)
    const post = (fields: Record<string, string>) =>
      submit(t, { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields })
    announced.length = 0
    expect((await post({ name: 'Alan', mobile: '+44 20 7946 0000' })).statusCode).toBe(201)
    expect((await post({ name: 'Alan Turing', phone: '+44 20 7946 0000' })).statusCode).toBe(201)
    expect((await post({ email: 'not an email', message: 'hello' })).statusCode).toBe(201)
    const [contact, ...others] = await contactsOf(t.app, bystander)
    expect(others).toEqual([])
    expect(contact).toMatchObject({ email: null, name: 'Alan Turing', phone: '+44 20 7946 0000' })
    expect(announced.map((change) => change.event)).toEqual(['contact.created', 'contact.updated'])
    const kept = await t.app.platform.db
      .select({ contactId: funnelFormSubmissions.contactId })
      .from(funnelFormSubmissions)
      .where(and(eq(funnelFormSubmissions.funnelId, funnelId)))
      .orderBy(funnelFormSubmissions.id)
    expect(kept.map((row) => row.contactId)).toEqual([contact?._id, contact?._id, null])
  })
  // A 3,000-character address reached the unique index on the contacts' emails: a 500.
  test('keeps a submission whose email is longer than SMTP carries, its contact found by phone', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const { funnelId, stepIds } = await seedFunnel(t.app, tenant)
    const email = `${randomText(3_000)}@example.com`
    const fields = { name: 'Long', email, phone: '+1 555 0100' }
    const response = await submit(t, { funnel_id: funnelId, step_id: stepIds[0], form_id: 'f', fields })
    expect(response.statusCode).toBe(201)
    const [contact, ...others] = await contactsOf(t.app, tenant)
    expect(others).toEqual([])
    expect(contact).toMatchObject({ email: null, name: 'Long', phone: '+1 555 0100' })
    expect(await submissionsOf(t, funnelId)).toMatchObject([{ fields, contactId: contact?._id }])
  })
})
