import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { FUNNELS, funnelCall, seedFunnel, softDeleteFunnel } from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { funnelSteps, funnels, funnelTagLinks, funnelTags } from './tables.js'

const preview = (t: TestApp, funnelId: string) =>
  t.app.inject({ url: `${FUNNELS}/preview?funnel_id=${funnelId}` })

const PREVIEWS_PER_MINUTE = 30
const randomIp = () => `10.${[...randomBytes(3)].join('.')}`
test.override('appEnv', { RATE_LIMIT_FUNNEL_PREVIEW_PER_MINUTE: String(PREVIEWS_PER_MINUTE) })

describe('funnel preview', () => {
  test('shows a funnel to anyone: steps in order, every tracking code empty, preview_mode true', async ({
    t,
    owner,
  }) => {
    const { db } = t.app.platform
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      name: 'Webinar',
      basePath: '/webinar',
      status: 'draft',
      steps: [{ name: 'Register', html: '<form></form>' }, { name: 'Thanks' }],
    })
    const [register, thanks] = stepIds as [string, string]
    await db
      .update(funnels)
      .set({ headerTrackingCode: '<script>gtag()</script>', footerTrackingCode: '<script>px()</script>' })
      .where(eq(funnels.id, funnelId))
    await db
      .update(funnelSteps)
      .set({
        trackingCode: { header: '<script>a</script>', footer: '<script>b</script>' },
        seo: { title: 'Join' },
      })
      .where(eq(funnelSteps.id, register))
    // Thanks before Register: the preview follows the order, not the creation.
    await db.update(funnelSteps).set({ order: 5 }).where(eq(funnelSteps.id, register))
    const tagId = newId()
    await db.insert(funnelTags).values({ id: tagId, accountId: owner.accountId, name: 'Events' })
    await db.insert(funnelTagLinks).values({ accountId: owner.accountId, funnelId, tagId })
    await seedFunnel(t.app, owner, { steps: [{ name: 'Elsewhere' }] })

    const response = await preview(t, funnelId)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: funnelId,
        name: 'Webinar',
        base_path: '/webinar',
        status: 'draft',
        account_id: owner.accountId,
        tags: [tagId],
        header_tracking_code: '',
        footer_tracking_code: '',
        preview_mode: true,
      },
    })
    expect(body.data.steps.map((s: { _id: string }) => s._id)).toEqual([thanks, register])
    expect(body.data.steps[1]).toMatchObject({
      name: 'Register',
      html: '<form></form>',
      seo: { title: 'Join' },
      tracking_code: { header: '', footer: '' },
    })
    expect(body.data.steps[0].tracking_code).toEqual({ header: '', footer: '' })
    expect(JSON.stringify(body)).not.toContain('<script>')
  })

  test('serves any status, with or without a token, of any account', async ({ t, owner, stranger }) => {
    for (const status of ['active', 'inactive', 'draft'] as const) {
      const { funnelId } = await seedFunnel(t.app, owner, { status })
      expect((await preview(t, funnelId)).json().data.status).toBe(status)
      const asStranger = await funnelCall(t.app, stranger, 'GET', `/preview?funnel_id=${funnelId}`)
      expect(asStranger.json().data).toMatchObject({ _id: funnelId, preview_mode: true })
    }
  })

  test('answers 400 for a malformed id, 404 for a missing or deleted funnel', async ({ t, owner }) => {
    const malformed = await preview(t, 'not-an-id')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json()).toEqual({ success: false, errno: 400, message: 'Invalid funnel ID' })
    const missing = await preview(t, newId())
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ success: false, errno: 404, message: 'Funnel not found' })
    const { funnelId } = await seedFunnel(t.app, owner)
    await softDeleteFunnel(t.app, funnelId)
    expect((await preview(t, funnelId)).json()).toMatchObject({ errno: 404, message: 'Funnel not found' })
    const without = await t.app.inject({ url: `${FUNNELS}/preview` })
    expect(without.json()).toMatchObject({ errno: 400, message: 'funnel_id is required' })
  })

  test('limits previews per IP (RATE_LIMIT_FUNNEL_PREVIEW_PER_MINUTE)', async ({ t }) => {
    const from = (remoteAddress: string) =>
      t.app.inject({ url: `${FUNNELS}/preview?funnel_id=${newId()}`, remoteAddress })
    // Addresses of this run alone: with REDIS_URL the counters outlive the app.
    const [first, second] = [randomIp(), randomIp()]
    for (let n = 0; n < PREVIEWS_PER_MINUTE; n++) expect((await from(first)).statusCode).toBe(404)
    const limited = await from(first)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, errno: 429 })
    expect((await from(second)).statusCode).toBe(404)
  })
})
