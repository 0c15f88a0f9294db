import { and, eq, getTableName, sql } from 'drizzle-orm'
import { boolean, pgTable, text } from 'drizzle-orm/pg-core'
import pg from 'pg'
import pino from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import { timestampColumn } from '../db/columns.js'
import type { Database } from '../db/connection.js'
import { lowestIdAt, newId } from '../db/ids.js'
import { HOUR_MS } from '../time.js'
import { createRetention, type RetentionRule, writtenBefore } from './retention.js'

/** An event table as a module would have one: time-ordered ids, a time, and whether the row is done with. */
const events = pgTable('retention_probe_events', {
  id: text('id').primaryKey(),
  at: timestampColumn('at').notNull(),
  done: boolean('done').notNull(),
  payload: text('payload').notNull(),
})

const rule = (periodMs: number | undefined): RetentionRule => ({
  table: events,
  periodMs,
  expendable: (cutoff) => and(writtenBefore(events.id, events.at, cutoff), eq(events.done, true)) as never,
})

/** An id of `time`'s second (as newId makes them), unique by `n`. */
const idAt = (time: Date, n: number) => lowestIdAt(time) + n.toString(16).padStart(16, '0')

const log = pino({ level: 'silent' })
const postgres = Boolean(process.env.DATABASE_URL)

describe('retention', () => {
  let database: TestDatabase
  let db: Database
  let sequence = 0

  /** `count` rows written `ageMs` ago, done with or not. */
  async function write(count: number, ageMs: number, done = true): Promise<void> {
    const at = new Date(Date.now() - ageMs)
    const rows = Array.from({ length: count }, () => ({
      id: idAt(at, ++sequence),
      at,
      done,
      payload: 'x'.repeat(200),
    }))
    await db.insert(events).values(rows)
  }

  const remaining = async () =>
    (await db.select({ at: events.at, done: events.done }).from(events)).map((row) => ({
      old: row.at.getTime() < Date.now() - HOUR_MS,
      done: row.done,
    }))

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
    await db.execute(
      sql`create table ${events} (id text primary key, at timestamptz not null, done boolean not null, payload text not null)`,
    )
  })
  afterAll(() => database.drop())
  beforeEach(async () => {
    await db.delete(events)
  })

  it('deletes, batch after batch, the rows past the period that are done with, and nothing else', async () => {
    const retention = createRetention({ db, log, vacuum: !postgres, batchSize: 2 })
    retention.register(rule(HOUR_MS))
    await write(5, 2 * HOUR_MS)
    await write(2, 2 * HOUR_MS, false)
    await write(3, HOUR_MS / 2)
    await write(1, 0)

    expect(await retention.runOnce()).toEqual({ [getTableName(events)]: 5 })
    const left = await remaining()
    expect(left.filter((row) => row.old)).toEqual([
      { old: true, done: false },
      { old: true, done: false },
    ])
    expect(left.filter((row) => !row.old)).toHaveLength(4)
  })

  it('keeps every row of a table whose period is off', async () => {
    const retention = createRetention({ db, log, vacuum: !postgres })
    retention.register(rule(undefined))
    await write(3, 1000 * HOUR_MS)
    expect(await retention.runOnce()).toEqual({})
    expect(await remaining()).toHaveLength(3)
  })

  it('stops at the next batch once stopped (a shutdown), and the next run goes on', async () => {
    const retention = createRetention({ db, log, vacuum: !postgres, batchSize: 2 })
    retention.register(rule(HOUR_MS))
    await write(6, 2 * HOUR_MS)
    retention.stop()
    expect(await retention.runOnce()).toEqual({})
    const next = createRetention({ db, log, vacuum: !postgres, batchSize: 2 })
    next.register(rule(HOUR_MS))
    expect(await next.runOnce()).toEqual({ [getTableName(events)]: 6 })
  })

  it('keeps a table from growing where the database does not vacuum by itself (the embedded one never does)', async () => {
    const retention = createRetention({ db, log, vacuum: true })
    retention.register(rule(HOUR_MS))
    const size = async () => {
      // The table's own pages: its primary key on random ids splits its pages for a few more rounds whatever
      // the vacuum does, and once made it grew past the bound on PostgreSQL under a full suite.
      const result = await db.execute(sql`select pg_relation_size(${getTableName(events)}) as size`)
      return Number((result as unknown as { rows: { size: number }[] }).rows[0]?.size)
    }
    await write(10, 0)
    const sizes: number[] = []
    for (let round = 0; round < 4; round++) {
      await write(1000, 2 * HOUR_MS)
      await retention.runOnce()
      sizes.push(await size())
    }
    // Each round's rows take the pages the round before freed: the table stays at a round's size (a few pages
    // more where another session's transaction kept a page from being freed in time), where without the
    // vacuum every round adds its rows' pages again.
    for (const later of sizes.slice(2)) expect(later).toBeLessThanOrEqual((sizes[1] as number) * 1.25)
  })

  it.runIf(postgres)('skips the rows another transaction holds, without waiting for it', async () => {
    const retention = createRetention({ db, log, vacuum: false })
    retention.register(rule(HOUR_MS))
    await write(3, 2 * HOUR_MS)
    const [held] = await db.select({ id: events.id }).from(events).limit(1)
    const writer = new pg.Client({ connectionString: database.url })
    await writer.connect()
    try {
      await writer.query('begin')
      await writer.query(`select 1 from ${getTableName(events)} where id = $1 for update`, [held?.id])
      expect(await retention.runOnce()).toEqual({ [getTableName(events)]: 2 })
      await writer.query('commit')
    } finally {
      await writer.end()
    }
    expect(await retention.runOnce()).toEqual({ [getTableName(events)]: 1 })
  })

  it('finds the rows written before a time along the time-ordered ids', () => {
    const time = new Date('2026-01-02T03:04:05.678Z')
    expect(lowestIdAt(time)).toBe((Date.parse('2026-01-02T03:04:05Z') / 1000).toString(16))
    expect(newId() > lowestIdAt(new Date(Date.now() - 1000))).toBe(true)
    expect(idAt(time, 1) > lowestIdAt(time)).toBe(true)
    expect(idAt(new Date(time.getTime() - 1000), 1) < lowestIdAt(time)).toBe(true)
  })
})
