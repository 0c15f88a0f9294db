import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readSeedMarker, type SeedResult, seedVersion, seedVolume } from '../bench/seed-volume.js'
import { adminHeaders, bearer, buildTestApp, type TestApp } from './helpers/app.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'

it('npm run seed:volume refuses the embedded database in one line', async () => {
  const { DATABASE_URL: _, ...env } = process.env
  const run = promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bench/seed-volume.ts', '--scale', '0.01'],
    {
      cwd: PROJECT_ROOT,
      env,
    },
  )
  await expect(run).rejects.toMatchObject({
    code: 1,
    stderr:
      'error: seed:volume fills PostgreSQL only: set DATABASE_URL (the embedded PGlite database is not seeded)\n',
  })
})

// The volume seed writes PostgreSQL directly; the embedded database is not seeded.
describe.runIf(process.env.DATABASE_URL)('npm run seed:volume', () => {
  let t: TestApp
  let db: pg.Client
  let seeded: SeedResult
  let headers: { authorization: string }
  let accountId: string

  /** One number from the seeded database. */
  const count = async (statement: string, values: unknown[] = [accountId]) =>
    Number((await db.query(statement, values)).rows[0].count)

  const get = async (url: string) => {
    const response = await t.app.inject({ url, headers })
    expect(response.statusCode, `GET ${url}: ${response.body.slice(0, 300)}`).toBe(200)
    return response.json()
  }

  beforeAll(async () => {
    t = await buildTestApp()
    const url = t.database.url as string
    seeded = await seedVolume(url, { scale: 0.001 })
    db = new pg.Client({ connectionString: url })
    await db.connect()
    // The main member of the largest account (its agency's own), as a platform token.
    const { rows } = await db.query(
      `select m.account_id, m.user_id from memberships m join accounts a on a.id = m.account_id
       join users u on u.id = m.user_id where a.name = 'Agency 0' and u.email = 'user-0@seed.example.com'`,
    )
    accountId = rows[0].account_id
    const minted = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/tokens',
      headers: adminHeaders,
      payload: { user_id: rows[0].user_id, account_id: accountId },
    })
    headers = bearer(minted.json().data.token)
  }, 120_000)

  afterAll(async () => {
    await db?.end()
    await t?.close()
  })

  it('reports the rows it wrote, refuses a database holding data, and writes the same rows again after --reset', async () => {
    expect(seeded.rows.contacts).toBe(await count('select count(*) from contacts', []))
    expect(seeded.rows.room_messages).toBe(await count('select count(*) from room_messages', []))
    await expect(seedVolume(t.database.url as string, { scale: 0.001 })).rejects.toThrow(/--reset/)

    const digest = async () =>
      (
        await db.query(
          `select (select md5(string_agg(c::text, ',' order by id)) from contacts c) as contacts,
             (select md5(string_agg(m::text, ',' order by id)) from room_messages m) as messages,
             (select md5(string_agg(l::text, ',' order by id)) from leads l) as leads`,
        )
      ).rows[0]
    const before = await digest()
    const again = await seedVolume(t.database.url as string, { scale: 0.001, reset: true })
    expect(again.rows).toEqual(seeded.rows)
    expect(await digest()).toEqual(before)
  })

  it('leaves a marker of its scale, version and rows on the database, which a refused seed keeps', async () => {
    const url = t.database.url as string
    const marker = { scale: 0.001, version: seedVersion(), rows: seeded.rows, seconds: expect.any(Number) }
    expect(await readSeedMarker(url)).toEqual(marker)
    await expect(seedVolume(url, { scale: 0.002 })).rejects.toThrow(/--reset/)
    expect(await readSeedMarker(url)).toEqual(marker)
  })

  it('skews the accounts: the largest agency and its sub-accounts hold about 40 % of the contacts', async () => {
    const held = await count(
      `select count(*) from contacts c join accounts a on a.id = c.account_id
       where a.id = $1 or a.parent_account = $1`,
    )
    const share = held / (seeded.rows.contacts ?? 0)
    expect(share).toBeGreaterThan(0.3)
    expect(share).toBeLessThan(0.5)
  })

  it('serves the contacts as the API wrote them', async () => {
    const page = await get('/v1/contacts?limit=100')
    expect(page.data.length).toBe(
      Math.min(100, await count('select count(*) from contacts where account_id = $1')),
    )
    expect(page.data[0]).toMatchObject({ email: expect.stringMatching(/^contact-\d+@example\.com$/) })
  })

  it("serves the main member's rooms and a room's messages", async () => {
    const list = await get('/api/conversation-v2/room')
    expect(list.pagination.total).toBe(await count('select count(*) from rooms where account_id = $1'))
    const room = list.rooms[0]
    expect(room.last_message).toBeTruthy()
    const page = await get(`/api/conversation-v2/room/${room._id}/messages?limit=50`)
    expect(page.messages).toHaveLength(50)
    expect(page.has_more).toBe(true)
    // Found by full-text search through the generated search vector.
    const word = (page.messages[0].content as string).split(' ').find((w) => w.length >= 3) as string
    const search = await get(`/api/conversation-v2/room/search?q=${word}`)
    expect(JSON.stringify(search)).toContain(word)
  })

  it('serves the funnels, the review requests, the leads and the OAuth grants', async () => {
    const funnels = await get('/v1/funnels?limit=100')
    expect(funnels.pagination.total).toBe(await count('select count(*) from funnels where account_id = $1'))
    const requests = await get('/reviews/requests')
    expect(requests.pagination.total).toBe(
      await count('select count(*) from review_requests where account_id = $1'),
    )
    const { rows } = await db.query(
      'select id from lead_campaigns where account_id = $1 order by id limit 1',
      [accountId],
    )
    const leads = await get(`/v1/integrations/socialnet/campaigns/${rows[0].id}/leads`)
    expect(leads.pagination.total).toBe(
      await count('select count(*) from leads where campaign_id = $1', [rows[0].id]),
    )
    expect(leads.data[0]).toMatchObject({ status: 'captured', contact_id: expect.any(String) })
    const grants = await get('/v1/auth/oauth/grants')
    expect(grants.data).toEqual([expect.objectContaining({ app_name: expect.stringMatching(/^App /) })])
  })

  it('rolls up the review requests and the clicks per day as the service does, and serves a year of statistics from them', async () => {
    // Each roll-up against the same groups counted from the raw rows: no group missing, extra or different.
    const differing = (rolledUp: string, raw: string) =>
      count(
        `select count(*) from ((${rolledUp} except all ${raw}) union all (${raw} except all ${rolledUp})) d`,
        [],
      )
    expect(
      await differing(
        'select account_id, day, platform, status, reason, requests, sent, clicked from review_request_daily_counts',
        `select account_id, (created_at at time zone 'UTC')::date, platform, status,
           case when status = 'skipped' then coalesce(reason, 'unknown') else '' end,
           count(*)::int, count(sent_at)::int, count(clicked_at)::int
         from review_requests group by 1, 2, 3, 4, 5`,
      ),
    ).toBe(0)
    expect(
      await differing(
        'select account_id, link_id, day, clicks, unique_clicks, bots from funnel_short_link_daily_clicks',
        `select account_id, link_id, (clicked_at at time zone 'UTC')::date, count(*)::int,
           (count(*) filter (where not is_bot and not is_repeat))::int, (count(*) filter (where is_bot))::int
         from funnel_short_link_clicks group by 1, 2, 3`,
      ),
    ).toBe(0)

    // Every seeded time lies in the year before 2026-11-01.
    const stats = await get('/reviews/stats?from=2025-11-01T00:00:00Z&to=2026-11-02T00:00:00Z')
    expect(stats.data.totals).toMatchObject({
      requested: await count('select count(*) from review_requests where account_id = $1'),
      clicked: await count(
        'select count(*) from review_requests where account_id = $1 and clicked_at is not null',
      ),
    })
    const { rows } = await db.query(
      'select l.code, count(c.id) from funnel_short_links l join funnel_short_link_clicks c on c.link_id = l.id where l.account_id = $1 group by l.code order by 2 desc limit 1',
      [accountId],
    )
    const link = await get(`/v1/funnels/shorten/${rows[0].code}?from=2025-11-01&to=2026-11-01`)
    expect(link.data.clicks.total).toBe(Number(rows[0].count))
  })
})
