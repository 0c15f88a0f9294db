import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stopEverything } from '../bench/children.js'
import { checkMix, type MixRequest, migrationMix } from '../bench/migrate-load.js'
import { formatMeasurement, formatSummary, judge } from '../bench/migrate-report.js'
import { BUNDLED_MIGRATIONS, type MeasureOptions, measureMigration } from '../bench/migrate-run.js'
import { seedVolume } from '../bench/seed-volume.js'
import { type Scale, startProviders, volumeAccounts } from '../bench/volume-routes.js'
import { listenTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/app.js'

/** A few seconds of each stretch: enough for the mix to go round several times at a tiny scale. */
const QUICK: MeasureOptions = {
  rate: 20,
  warmupSeconds: 1,
  beforeSeconds: 1,
  afterSeconds: 1.5,
  sampleMs: 20,
  settings: { lockTimeoutMs: 500, lockAttempts: 5 },
}

/**
 * A migration that takes contacts offline for 2.5 s: what the bench must catch (the service's own lock_timeout
 * answers 503 after 1 s), whatever the scale.
 */
async function lockingMigration(dir: string): Promise<string> {
  const folder = join(dir, 'contacts-offline')
  await mkdir(join(folder, 'meta'), { recursive: true })
  const tag = '0090_contacts_offline'
  await writeFile(
    join(folder, `${tag}.sql`),
    'LOCK TABLE "contacts" IN ACCESS EXCLUSIVE MODE;\n--> statement-breakpoint\nSELECT pg_sleep(2.5);\n',
  )
  const journal = {
    version: '7',
    dialect: 'postgresql',
    entries: [{ idx: 0, version: '7', when: 1_900_000_000_000, tag }],
  }
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify(journal))
  return folder
}

// The bench seeds PostgreSQL databases and samples pg_locks; the embedded database has neither use.
describe.runIf(process.env.DATABASE_URL)('npm run bench:migrate, at a tiny scale', () => {
  let t: TestApp & { baseUrl: string }
  let db: pg.Pool
  let mix: MixRequest[]
  let dir: string

  beforeAll(async () => {
    const providers = await startProviders()
    t = await listenTestApp(providers.env)
    const url = t.database.url as string
    await seedVolume(url, { scale: 0.001 })
    db = new pg.Pool({ connectionString: url, max: 2 })
    const target = {
      baseUrl: t.baseUrl,
      adminToken: TEST_ADMIN_TOKEN,
      databaseUrl: url,
      databasePoolSize: t.config.databasePoolSize,
    }
    const accounts = await volumeAccounts(target, db)
    const scale: Scale = { target, db, providers, accounts, load: { connections: 1, durationSeconds: 1 } }
    mix = await migrationMix(scale)
    dir = await mkdtemp(join(tmpdir(), 'migrate-bench-'))
  }, 120_000)

  afterAll(async () => {
    await db?.end()
    await t?.close()
    await stopEverything()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('sends reads and writes of contacts and chat for both accounts, each answered 2xx', async () => {
    expect(mix.map((item) => `${item.account} ${item.name}`)).toHaveLength(16)
    expect(new Set(mix.map((item) => item.request.method))).toEqual(new Set(['GET', 'POST', 'PATCH']))
    await checkMix(t.baseUrl, mix)
  })

  it('passes the bundled column on room_messages, its locks and statements reported', async () => {
    const folder = BUNDLED_MIGRATIONS[1] as string
    const judged = judge(await measureMigration(t.baseUrl, t.database.url as string, mix, folder, QUICK), 20)
    expect(judged.measurement.migrations.map((m) => m.tag)).toEqual([
      '0035_room_messages_pinned_at',
      '0036_room_messages_pinned_at_validated',
    ])
    expect(judged.verdict).toBe('PASS')
    expect(judged.before.requests).toBeGreaterThan(10)
    const detail = formatMeasurement(judged)
    expect(detail).toMatch(/room_messages\s+AccessExclusive\s+held in its transaction/)
    expect(detail).toContain('ADD COLUMN "pinned_at"')
    const { rows } = await db.query(
      `select 1 from information_schema.columns where table_name = 'room_messages' and column_name = 'pinned_at'`,
    )
    expect(rows).toHaveLength(1)
  }, 30_000)

  it('fails a migration that takes contacts offline: the requests behind it wait and answer 503', async () => {
    const folder = await lockingMigration(dir)
    const judged = judge(await measureMigration(t.baseUrl, t.database.url as string, mix, folder, QUICK), 20)
    expect(judged.verdict).toBe('FAIL')
    expect(judged.during.failed).toBeGreaterThan(0)
    expect(judged.before.failed).toBe(0)
    expect(formatMeasurement(judged)).toMatch(
      /contacts\s+AccessExclusive\s+held in its transaction\s+≤ 2,5\d\d ms/,
    )
    expect(formatSummary([judged])).toMatch(/contacts-offline .* FAIL$/)
  }, 30_000)
})
