import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { migrateDatabase, openDatabase } from '../src/platform/db/connection.js'
import { registerStop } from './children.js'
import { adminQuery, databaseUrl, dropDatabase } from './postgres.js'
import { readSeedMarker, type SeedMarker, seedVersion, seedVolume } from './seed-volume.js'

/**
 * The databases of `npm run bench:volume`: one seeded database per scale, kept between runs (a large scale
 * takes minutes to seed), and for each run a copy of it that the servers write to and that is dropped after,
 * so that every run reads the rows the seed wrote and nothing an earlier run's writes added.
 */

/** The kept database of a scale: `volumebench_0_01` for 0.01. */
export const seededName = (scale: number) => `volumebench_${String(scale).replace(/[^0-9a-z]/gi, '_')}`

export interface SeededDatabase {
  name: string
  marker: SeedMarker
  /** Whether this run seeded it (else an earlier run did, at the same scale and seed version). */
  seededNow: boolean
}

/**
 * The kept database of `scale`, created and seeded unless it already holds a complete seed of that scale and
 * of this seed's version (its marker, `readSeedMarker`); `reseed` seeds it again anyway.
 */
export async function seededDatabase(
  scale: number,
  options: { reseed: boolean; log: (line: string) => void },
): Promise<SeededDatabase> {
  const name = seededName(scale)
  const exists = await adminQuery('select 1 from pg_database where datname = $1', [name])
  if (exists.length === 0) await adminQuery(`create database ${name}`)
  const url = databaseUrl(name)
  const kept = await readSeedMarker(url)
  if (kept && kept.scale === scale && kept.version === seedVersion() && !options.reseed) {
    options.log(`${name}: seeded at --scale ${scale} before (${kept.seconds} s), reused`)
    return { name, marker: kept, seededNow: false }
  }
  if (kept && kept.scale === scale && !options.reseed && (await migratedForward(url, kept, options.log))) {
    const marker = (await readSeedMarker(url)) as SeedMarker
    options.log(`${name}: seeded at --scale ${scale} before (${kept.seconds} s), migrated since, reused`)
    return { name, marker, seededNow: false }
  }
  options.log(`${name}: seeding at --scale ${scale}${kept ? ' again' : ''}`)
  // The database is the bench's own: whatever an older seed left in it is emptied.
  await seedVolume(url, { scale, reset: true, log: (line) => options.log(`${name}: ${line}`) })
  const marker = await readSeedMarker(url)
  if (!marker) throw new Error(`${name}: the seed left no marker`)
  return { name, marker, seededNow: true }
}

/**
 * A copy of the seeded database for one run (PostgreSQL copies its files: seconds, not a seed's minutes),
 * dropped when the run ends, fails or is stopped.
 */
export async function runCopy(seeded: SeededDatabase): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${seeded.name}_run_${randomBytes(4).toString('hex')}`
  await adminQuery(`create database ${name} template ${seeded.name} strategy file_copy`)
  const drop = registerStop(() => dropDatabase(name))
  return { url: databaseUrl(name), drop }
}

const JOURNAL = new URL('../drizzle/meta/_journal.json', import.meta.url)

/**
 * `seedVersion` as it was when the migrations' journal held its first `entries` migrations: the hash of
 * seed-volume.ts and of the journal as drizzle-kit writes it (JSON, two spaces), cut there.
 */
function versionWithMigrations(entries: number): string {
  const journal = JSON.parse(readFileSync(JOURNAL, 'utf8')) as { entries: unknown[] }
  const cut = JSON.stringify({ ...journal, entries: journal.entries.slice(0, entries) }, null, 2)
  const hash = createHash('sha256').update(readFileSync(new URL('./seed-volume.ts', import.meta.url)))
  return hash.update(cut).digest('hex').slice(0, 16)
}

/**
 * A database seeded by this seed-volume.ts before later migrations were written is brought up to date by
 * applying them, as a deployment would (CONCURRENTLY where they say so), instead of being seeded again (about
 * ten minutes at `--scale 1`): its rows are those a seed writes today, which runs the migrations first and
 * the same inserts. Its marker then names this version. Its marker's version must be this file's with the
 * journal cut at the migrations it applied or later (the marker is written when a seed ends, and a migration
 * committed meanwhile is in its journal, not in its tables). Anything else is seeded again.
 */
async function migratedForward(url: string, kept: SeedMarker, log: (line: string) => void): Promise<boolean> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ applied: number }>(
      'select count(*)::int as applied from drizzle.__drizzle_migrations',
    )
    const applied = rows[0]?.applied ?? 0
    const entries = (JSON.parse(readFileSync(JOURNAL, 'utf8')) as { entries: unknown[] }).entries.length
    let seededAt: number | undefined
    for (let cut = applied; cut < entries && seededAt === undefined; cut++) {
      if (versionWithMigrations(cut) === kept.version) seededAt = cut
    }
    if (seededAt === undefined) return false
    log(`migrating: ${applied} of ${entries} migrations applied when seeded`)
    const handle = await openDatabase({ databaseUrl: url, poolSize: 1 })
    try {
      await migrateDatabase(handle, { databaseUrl: url })
    } finally {
      await handle.close()
    }
    // As a seed ends: statistics taken, the new indexes' expressions too (an ANALYZE gathers those; a
    // deployment's autovacuum would only after a tenth of the table changed).
    await client.query('vacuum analyze')
    // As the seed writes its marker (seed-volume.ts), with this version.
    const marker = JSON.stringify({ seed_volume: { ...kept, version: seedVersion() } })
    const { rows: statement } = await client.query<{ text: string }>(
      `select format('comment on database %I is %L', current_database(), $1::text) as text`,
      [marker],
    )
    await client.query(statement[0]?.text as string)
    return true
  } finally {
    await client.end()
  }
}
