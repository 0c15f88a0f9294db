import { eq, sql } from 'drizzle-orm'
import { integer, pgSchema, text } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import type { Database } from './connection.js'
import { preparedOnce, preparedStatement } from './prepared.js'
import { inTransaction } from './transaction.js'

// A table every migrated database has: Drizzle's record of the applied migrations.
const migrations = pgSchema('drizzle').table('__drizzle_migrations', {
  id: integer('id'),
  hash: text('hash'),
})

const sum = preparedStatement<{ sum: number; label: string }>(
  'test_prepared_sum',
  sql`select ${sql.placeholder('a')}::int + ${sql.placeholder('b')}::int as sum,
    ${sql.placeholder('label')}::text as label`,
)

describe('prepared statements', () => {
  let database: TestDatabase
  let db: Database

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
  })
  afterAll(() => database.drop())

  it('runs a raw statement with new values on each call, on the database and in a transaction', async () => {
    expect(await sum(db, { a: 1, b: 2, label: 'first' })).toEqual([{ sum: 3, label: 'first' }])
    expect(await sum(db, { a: 40, b: 2, label: 'second' })).toEqual([{ sum: 42, label: 'second' }])
    const inside = await inTransaction(db, (tx) => sum(tx, { a: 5, b: 5, label: 'in a transaction' }))
    expect(inside).toEqual([{ sum: 10, label: 'in a transaction' }])
  })

  it('builds a Drizzle query once per database, then runs it with placeholders', async () => {
    let builds = 0
    const find = preparedOnce((on) => {
      builds++
      return on
        .select({ hash: migrations.hash })
        .from(migrations)
        .where(eq(migrations.hash, sql.placeholder('hash')))
        .prepare('test_prepared_find_migration')
    })
    const [first] = await db.select({ hash: migrations.hash }).from(migrations).limit(1)
    expect(first).toBeDefined()
    expect(await find(db).execute({ hash: first?.hash })).toEqual([first])
    expect(await find(db).execute({ hash: 'none such' })).toEqual([])
    expect(builds).toBe(1)
  })
})
