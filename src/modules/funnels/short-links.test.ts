import { eq } from 'drizzle-orm'
import { describe, expect, vi } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { FUNNELS, funnelCall, seedFunnel, softDeleteFunnel } from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { randomCode, shortenFunnel } from './short-links.service.js'
import { funnelShortLinkClicks, funnelShortLinks } from './tables.js'

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

const shorten = (t: TestApp, tenant: Tenant, funnelId: string) =>
  funnelCall(t.app, tenant, 'POST', `/shorten?funnel_id=${funnelId}`)
const codeOf = (url: string) => url.split('/s/')[1] as string
const follow = (
  t: TestApp,
  code: string,
  headers: Record<string, string> = { 'user-agent': CHROME },
  ip = '198.51.100.1',
) => t.app.inject({ url: `/s/${code}`, headers, remoteAddress: ip })
const clicksOf = (t: TestApp, linkCode: string) =>
  t.app.platform.db
    .select({ click: funnelShortLinkClicks })
    .from(funnelShortLinkClicks)
    .innerJoin(funnelShortLinks, eq(funnelShortLinks.id, funnelShortLinkClicks.linkId))
    .where(eq(funnelShortLinks.code, linkCode))
    .orderBy(funnelShortLinkClicks.id)
    .then((rows) => rows.map((row) => row.click))

describe('shorten', () => {
  test('a 6-character short URL, the same one on a second call', async ({ t, owner }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const first = await shorten(t, owner, funnelId)
    expect(first.statusCode).toBe(201)
    const url: string = first.json().data
    expect(url).toMatch(new RegExp(`^${t.config.publicBaseUrl}/s/[0-9A-Za-z]{6}$`))
    const again = await shorten(t, owner, funnelId)
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual({ success: true, message: 'SUCCESS', data: url })
    const other = (await shorten(t, owner, (await seedFunnel(t.app, owner)).funnelId)).json().data
    expect(other).not.toBe(url)
  })

  test('two concurrent calls make one link between them', async ({ t, owner }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const answers = await Promise.all([shorten(t, owner, funnelId), shorten(t, owner, funnelId)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 201])
    expect(answers[0]?.json().data).toBe(answers[1]?.json().data)
    const links = await t.app.platform.db
      .select()
      .from(funnelShortLinks)
      .where(eq(funnelShortLinks.funnelId, funnelId))
    expect(links).toHaveLength(1)
  })

  test('draws again when the code is taken, and gives up after five draws', async ({ t, owner }) => {
    const { db, config } = t.app.platform
    const taken = (
      await shortenFunnel(
        db,
        config.publicBaseUrl,
        owner.accountId,
        (
          await seedFunnel(t.app, owner)
        ).funnelId,
      )
    ).url
    const drawn = [codeOf(taken), codeOf(taken), 'Zz9Zz9']
    const { funnelId } = await seedFunnel(t.app, owner)
    const made = await shortenFunnel(
      db,
      config.publicBaseUrl,
      owner.accountId,
      funnelId,
      () => drawn.shift() as string,
    )
    expect(made).toEqual({ url: `${config.publicBaseUrl}/s/Zz9Zz9`, created: true })
    expect(drawn).toEqual([])
    const unlucky = await seedFunnel(t.app, owner)
    let draws = 0
    const alwaysTaken = () => {
      draws++
      return 'Zz9Zz9'
    }
    await expect(
      shortenFunnel(db, config.publicBaseUrl, owner.accountId, unlucky.funnelId, alwaysTaken),
    ).rejects.toThrow('no free short link code in 5 draws')
    expect(draws).toBe(5)
  })

  test('codes are 6 characters drawn from all 62', () => {
    const codes = Array.from({ length: 2_000 }, randomCode)
    for (const code of codes) expect(code).toMatch(/^[0-9A-Za-z]{6}$/)
    expect(new Set(codes.join('')).size).toBe(62)
  })

  test('refuses a malformed id, an unknown, deleted or another account’s funnel', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    expect((await shorten(t, owner, 'nope')).json()).toEqual({
      success: false,
      errno: 400,
      message: 'Invalid funnel ID',
    })
    expect((await shorten(t, owner, newId())).json()).toEqual({
      success: false,
      errno: 404,
      message: 'Funnel not found',
    })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'POST', url: `${FUNNELS}/shorten?funnel_id=${funnelId}` },
      owner,
      stranger,
    )
    const deleted = await seedFunnel(t.app, owner)
    await softDeleteFunnel(t.app, deleted.funnelId)
    expect((await shorten(t, owner, deleted.funnelId)).statusCode).toBe(404)
  })
})

describe('following a short link', () => {
  test("redirects to the funnel's domain at its first step, or to its preview", async ({ t, owner }) => {
    const withDomain = await seedFunnel(t.app, owner, {
      domainName: `shop-${newId()}.example.com`,
      basePath: '/spring',
      steps: [{ path: '/welcome' }, { path: '/buy' }],
    })
    const code = codeOf((await shorten(t, owner, withDomain.funnelId)).json().data)
    const response = await follow(t, code)
    expect(response.statusCode).toBe(302)
    expect(response.headers.location).toBe(`https://${withDomain.domainName}/spring/welcome`)
    expect(response.headers['cache-control']).toBe('no-store')

    const plain = await seedFunnel(t.app, owner)
    const plainCode = codeOf((await shorten(t, owner, plain.funnelId)).json().data)
    expect((await follow(t, plainCode)).headers.location).toBe(
      `${t.config.publicBaseUrl}/v1/funnels/preview?funnel_id=${plain.funnelId}`,
    )
  })

  test('is not found for an unknown code or a deleted funnel, and records nothing then', async ({
    t,
    owner,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const code = codeOf((await shorten(t, owner, funnelId)).json().data)
    for (const unknown of ['000000', 'abc', 'x'.repeat(64)]) {
      const response = await follow(t, unknown)
      expect(response.statusCode, unknown).toBe(404)
      expect(response.json()).toEqual({ success: false, errno: 404, message: 'Short link not found' })
    }
    await softDeleteFunnel(t.app, funnelId)
    expect((await follow(t, code)).statusCode).toBe(404)
    expect(await clicksOf(t, code)).toEqual([])
    expect((await funnelCall(t.app, owner, 'GET', `/shorten/${code}`)).statusCode).toBe(404)
  })

  test('records each click: referrer, user agent, a keyed visitor hash, bots and repeats within an hour', async ({
    t,
    owner,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const code = codeOf((await shorten(t, owner, funnelId)).json().data)
    await follow(t, code, { 'user-agent': CHROME, referer: 'https://news.example/post' }, '203.0.113.9')
    await follow(t, code, { 'user-agent': CHROME }, '203.0.113.9')
    await follow(t, code, { 'user-agent': CHROME }, '203.0.113.10')
    await follow(t, code, { 'user-agent': GOOGLEBOT }, '66.249.66.1')
    await follow(t, code, { 'user-agent': '' }, '203.0.113.11')
    const clicks = await clicksOf(t, code)
    expect(
      clicks.map(({ referrer, userAgent, isBot, isRepeat }) => ({ referrer, userAgent, isBot, isRepeat })),
    ).toEqual([
      { referrer: 'https://news.example/post', userAgent: CHROME, isBot: false, isRepeat: false },
      { referrer: null, userAgent: CHROME, isBot: false, isRepeat: true },
      { referrer: null, userAgent: CHROME, isBot: false, isRepeat: false },
      { referrer: null, userAgent: GOOGLEBOT, isBot: true, isRepeat: false },
      { referrer: null, userAgent: null, isBot: true, isRepeat: false },
    ])
    const [first, second, third] = clicks
    expect(second?.visitorHash).toBe(first?.visitorHash)
    expect(third?.visitorHash).not.toBe(first?.visitorHash)
    expect(first?.visitorHash).not.toContain('203.0.113.9')
    expect(first?.accountId).toBe(owner.accountId)

    // An hour later the same visitor counts again.
    await t.app.platform.db
      .update(funnelShortLinkClicks)
      .set({ clickedAt: new Date(Date.now() - 61 * 60_000) })
      .where(eq(funnelShortLinkClicks.visitorHash, first?.visitorHash as string))
    await follow(t, code, { 'user-agent': CHROME }, '203.0.113.9')
    expect((await clicksOf(t, code)).at(-1)).toMatchObject({
      visitorHash: first?.visitorHash,
      isRepeat: false,
    })
  })
})

describe('short link analytics', () => {
  const PERSON = { 'user-agent': CHROME }
  const BOT = { 'user-agent': GOOGLEBOT }

  /**
   * Follows the link at each time in turn (the clock set to it, oldest first, as clicks arrive), so that
   * each click is stored, and rolled up, as in use.
   */
  async function clickAt(t: TestApp, code: string, clicks: [string, Record<string, string>][]) {
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      for (const [at, headers] of clicks) {
        vi.setSystemTime(new Date(at))
        expect((await follow(t, code, headers)).statusCode).toBe(302)
      }
    } finally {
      vi.useRealTimers()
    }
  }

  async function linkWithClicks(t: TestApp, owner: Tenant) {
    const { funnelId } = await seedFunnel(t.app, owner)
    const code = codeOf((await shorten(t, owner, funnelId)).json().data)
    const [link] = await t.app.platform.db
      .select()
      .from(funnelShortLinks)
      .where(eq(funnelShortLinks.code, code))
    await clickAt(t, code, [
      ['2024-12-31T08:00:00Z', PERSON],
      ['2025-03-01T00:00:00Z', PERSON],
      // The same visitor within the hour: a repeat.
      ['2025-03-01T00:30:00Z', PERSON],
      ['2025-03-01T12:00:00Z', BOT],
      ['2025-03-03T08:00:00Z', PERSON],
      ['2025-03-05T00:00:00Z', BOT],
    ])
    return { funnelId, code, link }
  }

  test('totals and clicks per UTC day over from–to, days without clicks included', async ({ t, owner }) => {
    const { funnelId, code, link } = await linkWithClicks(t, owner)
    const response = await funnelCall(t.app, owner, 'GET', `/shorten/${code}?from=2025-03-01&to=2025-03-04`)
    expect(response.statusCode).toBe(200)
    expect(response.json().data).toEqual({
      code,
      short_url: `${t.config.publicBaseUrl}/s/${code}`,
      funnel_id: funnelId,
      created_at: link?.createdAt.toISOString(),
      clicks: { total: 4, unique: 2, bots: 1 },
      series: [
        { date: '2025-03-01', clicks: 3, unique: 1 },
        { date: '2025-03-02', clicks: 0, unique: 0 },
        { date: '2025-03-03', clicks: 1, unique: 1 },
        { date: '2025-03-04', clicks: 0, unique: 0 },
      ],
    })
    const series = (await funnelCall(t.app, owner, 'GET', `/shorten/${code}`)).json().data.series
    expect(series).toHaveLength(30)
    expect(series.at(-1).date).toBe(new Date().toISOString().slice(0, 10))
  })

  test('bounds the series and refuses bad dates and codes, naming them', async ({ t, owner, stranger }) => {
    const { code } = await linkWithClicks(t, owner)
    const refused = async (path: string, message: RegExp) => {
      const response = await funnelCall(t.app, owner, 'GET', path)
      expect(response.statusCode, path).toBe(400)
      expect(response.json().message, path).toMatch(message)
    }
    expect(
      (await funnelCall(t.app, owner, 'GET', `/shorten/${code}?from=2024-03-01&to=2025-03-01`)).statusCode,
    ).toBe(200)
    await refused(
      `/shorten/${code}?from=2024-02-29&to=2025-03-01`,
      /^from must be at most 366 days before to/,
    )
    await refused(`/shorten/${code}?from=2025-03-02&to=2025-03-01`, /^from must not be after to/)
    await refused(`/shorten/${code}?from=2025-02-30`, /^from /)
    await refused(`/shorten/${code}?to=today`, /^to /)
    await refused('/shorten/abc', /^code /)
    expect((await funnelCall(t.app, owner, 'GET', '/shorten/000000')).statusCode).toBe(404)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/shorten/${code}` },
      owner,
      stranger,
    )
  })

  test('a click counts on the UTC day it was made, up to the last millisecond of the day', async ({
    t,
    owner,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const code = codeOf((await shorten(t, owner, funnelId)).json().data)
    await clickAt(t, code, [
      ['2025-03-01T23:59:59.999Z', PERSON],
      ['2025-03-02T00:00:00.000Z', BOT],
    ])
    const response = await funnelCall(t.app, owner, 'GET', `/shorten/${code}?from=2025-03-01&to=2025-03-02`)
    expect(response.json().data).toMatchObject({
      clicks: { total: 2, unique: 1, bots: 1 },
      series: [
        { date: '2025-03-01', clicks: 1, unique: 1 },
        { date: '2025-03-02', clicks: 1, unique: 0 },
      ],
    })
  })

  test('are read from the daily roll-up: raw clicks deleted by their retention change nothing', async ({
    t,
    owner,
  }) => {
    const { code, link } = await linkWithClicks(t, owner)
    const stats = () => funnelCall(t.app, owner, 'GET', `/shorten/${code}?from=2024-12-31&to=2025-03-05`)
    const before = (await stats()).json().data
    expect(before.clicks).toEqual({ total: 6, unique: 3, bots: 2 })
    await t.app.platform.db
      .delete(funnelShortLinkClicks)
      .where(eq(funnelShortLinkClicks.linkId, link?.id as string))
    expect(await clicksOf(t, code)).toEqual([])
    expect((await stats()).json().data).toEqual(before)
  })
})
