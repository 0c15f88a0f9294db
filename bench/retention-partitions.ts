/**
 * `npx tsx bench/retention-partitions.ts [--rows 1000000] [--days 100] [--expire 10]`: which way of
 * retention serves an append-only table: batched deletes as the service runs them, or a
 * table partitioned by month whose oldest partitions are dropped. On a fresh PostgreSQL database migrated
 * as the server migrates it, the largest append-only table, `funnel_short_link_clicks` (its reference to
 * the links dropped, so that made-up clicks need no links), and a copy partitioned by range of `clicked_at`
 * each hold `--rows` clicks over `--days` days. The oldest `--expire` days go: from the table by the
 * service's own retention run (its clicks rule, src/modules/funnels/retention.repository.ts), from the copy
 * by dropping the months all of whose days expired, while another connection inserts one click every 5 ms,
 * as the redirect does. The inserts' p50, p99 and slowest are printed beside those of as long a stretch
 * without retention.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import pino from 'pino'
import { clicksRetention } from '../src/modules/funnels/retention.repository.js'
import { type Database, migrateDatabase, openDatabase } from '../src/platform/db/connection.js'
import { createRetention } from '../src/platform/jobs/retention.js'
import { latencyPercentile, newLatencyHistogram, recordLatency } from './latency.js'
import { loadAverage } from './machine.js'
import { createBenchDatabase } from './postgres.js'

const INSERT_EVERY_MS = 5
const DAY_MS = 86_400_000
const END = Date.parse('2026-11-01T00:00:00Z')

/** The clicks' columns, and a row of click `i` at `at`: ids as newId makes them (its second first). */
const COLUMNS = 'id, account_id, link_id, clicked_at, referrer, user_agent, visitor_hash, is_bot, is_repeat'
const rowsSql = (rows: number, days: number) => `
  select lpad(to_hex(extract(epoch from at)::bigint), 8, '0') || lpad(to_hex(i), 16, '0'),
    'acc' || (i % 500), 'link' || (i % 5000), at, 'https://example.com/ref', 'Mozilla/5.0 (bench)',
    md5(i::text), false, i % 7 = 0
  from (select i, to_timestamp(${END / 1000} - ${days * 86_400}.0 * (${rows} - i) / ${rows}) as at
        from generate_series(1, ${rows}) i) s`

/** One click inserted into `table` every 5 ms on its own connection until stopped; the inserts' latencies. */
function insertLoop(url: string, table: string) {
  const histogram = newLatencyHistogram()
  let running = true
  let slowest = 0
  let n = 0
  const done = (async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      while (running) {
        const started = performance.now()
        await client.query(
          `insert into ${table} (${COLUMNS}) values (lpad(to_hex(extract(epoch from now())::bigint), 8, '0') ||
            lpad(to_hex($1::bigint), 16, '0'), 'acc1', 'link1', now(), null, 'Mozilla/5.0', md5($1::text), false, false)`,
          [n++],
        )
        const ms = performance.now() - started
        recordLatency(histogram, ms)
        slowest = Math.max(slowest, ms)
        await delay(INSERT_EVERY_MS)
      }
    } finally {
      await client.end()
    }
  })()
  return {
    stop: async () => {
      running = false
      await done
      const p = (f: number) => latencyPercentile(histogram, f).toFixed(2)
      return `${n} inserts: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, slowest ${slowest.toFixed(1)} ms`
    },
  }
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now()
  const result = await work()
  return { ms: performance.now() - started, result }
}

/** Inserts for `ms` without retention: the stretch compared with. */
async function quietStretch(url: string, table: string, ms: number): Promise<string> {
  const loop = insertLoop(url, table)
  await delay(ms)
  return loop.stop()
}

const PLAIN = 'funnel_short_link_clicks'
const PARTITIONED = 'clicks_partitioned'

/** The service's retention run, its period keeping `--days` less `--expire` days before END. */
async function batchedDeletes(db: Database, url: string, periodMs: number) {
  const retention = createRetention({
    db,
    log: pino({ level: 'silent' }),
    vacuum: false,
    maxRunMs: 3_600_000,
  })
  retention.register(clicksRetention(periodMs))
  const loop = insertLoop(url, PLAIN)
  const { ms, result } = await timed(() => retention.runOnce(new Date(END)))
  const inserts = await loop.stop()
  const deleted = result[PLAIN] ?? 0
  return {
    ms,
    line:
      `batched deletes: ${deleted} rows in ${(ms / 1000).toFixed(1)} s (${Math.round(deleted / (ms / 1000))} rows/s, ` +
      `half of it resting between batches); ${inserts}`,
  }
}

/** The monthly partitions: each one's name and the start of the month after it. */
type Months = { name: string; until: Date }[]

async function partitionDrops(db: pg.Pool, url: string, months: Months, cutoff: Date) {
  // Only a month whose every day is past the period goes.
  const expired = months.filter((month) => month.until <= cutoff)
  const loop = insertLoop(url, PARTITIONED)
  const { ms, result: dropped } = await timed(async () => {
    let rows = 0
    for (const { name } of expired) {
      rows += (await db.query(`select count(*)::int as n from ${name}`)).rows[0].n
      // Detached concurrently, the parent is never locked against the inserts; then dropped alone.
      await db.query(`alter table clicks_partitioned detach partition ${name} concurrently`)
      await db.query(`drop table ${name}`)
    }
    return rows
  })
  const inserts = await loop.stop()
  return {
    ms,
    line: `partitions dropped: ${expired.map((month) => month.name).join(', ') || 'none'} (${dropped} rows) in ${(ms / 1000).toFixed(2)} s; ${inserts}`,
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      days: { type: 'string', default: '100' },
      expire: { type: 'string', default: '10' },
    },
  })
  const rows = Number(values.rows)
  const days = Number(values.days)
  const database = await createBenchDatabase()
  const handle = await openDatabase({ databaseUrl: database.url, poolSize: 2 })
  const db = new pg.Pool({ connectionString: database.url, max: 2 })
  try {
    await migrateDatabase(handle, { databaseUrl: database.url })
    console.log(`load average before: ${loadAverage()}`)
    await db.query(`alter table ${PLAIN} drop constraint if exists funnel_short_link_clicks_link_fk`)
    // A partitioned table's keys must hold its partition key: (id, clicked_at) instead of id.
    await db.query(`create table clicks_partitioned (like funnel_short_link_clicks including defaults including constraints)
      partition by range (clicked_at)`)
    await db.query('alter table clicks_partitioned add primary key (id, clicked_at)')
    await db.query('create index on clicks_partitioned (link_id, clicked_at)')
    const first = new Date(END - days * DAY_MS)
    const months: Months = []
    for (
      let month = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1));
      month.getTime() <= Date.now() + 31 * DAY_MS;
    ) {
      const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))
      const name = `clicks_p${month.toISOString().slice(0, 7).replace('-', '_')}`
      await db.query(
        `create table ${name} partition of clicks_partitioned for values from ('${month.toISOString().slice(0, 10)}') to ('${next.toISOString().slice(0, 10)}')`,
      )
      months.push({ name, until: next })
      month = next
    }
    for (const table of [PLAIN, PARTITIONED]) {
      const { ms } = await timed(() => db.query(`insert into ${table} (${COLUMNS}) ${rowsSql(rows, days)}`))
      await db.query(`vacuum analyze ${table}`)
      console.log(`${table}: ${rows} clicks over ${days} days written in ${(ms / 1000).toFixed(1)} s`)
    }
    // Batches delete the oldest days; whole months go only once all their days expired.
    const periodMs = (days - Number(values.expire)) * DAY_MS
    const deletes = await batchedDeletes(handle.db, database.url, periodMs)
    console.log(`without retention: ${await quietStretch(database.url, PLAIN, deletes.ms)}`)
    console.log(deletes.line)
    const drops = await partitionDrops(db, database.url, months, new Date(END - periodMs))
    console.log(
      `without retention: ${await quietStretch(database.url, PARTITIONED, Math.max(drops.ms, 2000))}`,
    )
    console.log(drops.line)
    console.log(`load average after: ${loadAverage()}`)
  } finally {
    await db.end()
    await handle.close()
    await database.drop()
  }
}

main().catch((error: Error) => {
  console.error(`error: ${error.message}`)
  process.exitCode = 1
})
