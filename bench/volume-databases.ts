import { randomBytes } from 'node:crypto'
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
