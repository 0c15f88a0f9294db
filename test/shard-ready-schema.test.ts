import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  listCatalogForeignKeys,
  listCatalogTables,
  listCatalogUniqueIndexes,
  listNullableAccountIdTables,
} from '../src/modules/accounts/account-catalog.repository.js'
import type { Database } from '../src/platform/db/connection.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import {
  ATTRIBUTED_LATER_TABLES,
  CONTRACT_IN_NEXT_RELEASE,
  GLOBAL_TABLES,
  GLOBAL_UNIQUE_KEYS,
} from './shard-ready-schema.exceptions.js'

/**
 * What keeps the schema ready to be distributed by account (Citus-style, ARCHITECTURE.md): read from
 * PostgreSQL's catalog, so that a table added later is held to the same rules. An account-owned table is
 * one with an `account_id` column. Each line names one break:
 *
 * - an account-owned table whose primary key lacks `account_id` (or that has none);
 * - a unique index (or constraint) of an account-owned table without `account_id`: on a table distributed by
 *   account, each shard can only enforce what is unique within its accounts;
 * - a foreign key between two account-owned tables that does not pair `account_id` with `account_id`: the
 *   two rows could be on different shards;
 * - a foreign key from a global table to an account-owned one: a reference table cannot point into a
 *   distributed one;
 * - a table without `account_id`, or whose `account_id` may be null, that is not in the lists of exceptions
 *   (shard-ready-schema.exceptions.ts), each of which says why it is global by nature; an exception that no
 *   longer matches the catalog is reported too, so that the lists stay the truth.
 */
async function shardingBreaks(db: Database): Promise<string[]> {
  const [tables, nullable, uniqueIndexes, foreignKeys] = await Promise.all([
    listCatalogTables(db),
    listNullableAccountIdTables(db),
    listCatalogUniqueIndexes(db),
    listCatalogForeignKeys(db),
  ])
  const owned = new Set(tables.filter((table) => table.hasAccountId).map((table) => table.name))
  const attributedLater = new Set(nullable)
  const breaks: string[] = []

  for (const table of tables) {
    if (!table.hasAccountId) {
      if (!(table.name in GLOBAL_TABLES))
        breaks.push(`${table.name}: no account_id, and not a listed global table`)
      continue
    }
    if (attributedLater.has(table.name)) {
      if (!(table.name in ATTRIBUTED_LATER_TABLES))
        breaks.push(`${table.name}: account_id may be null, and not a listed table attributed later`)
      continue
    }
    const key = uniqueIndexes.find((index) => index.primary && index.table === table.name)
    if (!key) breaks.push(`${table.name}: no primary key`)
    else if (!key.columns.includes('account_id') && !(key.name in CONTRACT_IN_NEXT_RELEASE))
      breaks.push(`${table.name}: primary key (${key.columns.join(', ')}) without account_id`)
  }

  for (const index of uniqueIndexes) {
    if (index.primary || !owned.has(index.table) || index.columns.includes('account_id')) continue
    if (index.name in GLOBAL_UNIQUE_KEYS || index.name in CONTRACT_IN_NEXT_RELEASE) continue
    breaks.push(`${index.table}: unique index ${index.name} (${index.columns.join(', ')}) without account_id`)
  }

  for (const key of foreignKeys) {
    const named = `${key.name}: (${key.columns.join(', ')}) -> ${key.referenced} (${key.referencedColumns.join(', ')})`
    if (!owned.has(key.referenced)) continue // a global table: a reference table every shard holds
    if (!owned.has(key.table)) {
      breaks.push(`${key.table}: global, references account-owned ${named}`)
      continue
    }
    const position = key.columns.indexOf('account_id')
    if (position < 0 || key.referencedColumns[position] !== 'account_id')
      breaks.push(`${key.table}: foreign key without account_id on both sides ${named}`)
  }

  // The exceptions name what the catalog has: one that no longer matches is stale.
  const names = new Map(tables.map((table) => [table.name, table]))
  for (const name of Object.keys(GLOBAL_TABLES))
    if (names.get(name)?.hasAccountId !== false)
      breaks.push(`exception ${name}: no such table without account_id`)
  for (const name of Object.keys(ATTRIBUTED_LATER_TABLES))
    if (!attributedLater.has(name)) breaks.push(`exception ${name}: no such table with a nullable account_id`)
  const indexes = new Map(uniqueIndexes.map((index) => [index.name, index]))
  for (const name of [...Object.keys(GLOBAL_UNIQUE_KEYS), ...Object.keys(CONTRACT_IN_NEXT_RELEASE)]) {
    const index = indexes.get(name)
    if (!index || index.columns.includes('account_id') || !owned.has(index.table))
      breaks.push(`exception ${name}: no such unique index without account_id on an account-owned table`)
  }
  return breaks.sort()
}

describe('a schema that can be distributed by account', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.drop())

  it('keys every account-owned table, and every reference between two, by account_id', async () => {
    expect(await shardingBreaks(database.handle.db)).toEqual([])
  })

  it('finds the breaks of a table added later', async () => {
    // In a transaction rolled back at the end, on the connection of its own that sees the probe's schema only.
    let breaks: string[] = []
    const rolledBack = new Error('rolled back')
    await database.handle.db
      .transaction(async (tx) => {
        await tx.execute(sql`create schema shard_probe`)
        await tx.execute(sql`set local search_path to shard_probe`)
        await tx.execute(sql`create table parents (id text primary key, account_id text not null)`)
        await tx.execute(sql`create unique index parents_account_id on parents (account_id, id)`)
        await tx.execute(sql`create table children (
          id text not null, account_id text not null, parent_id text references parents (id), code text,
          primary key (account_id, id))`)
        await tx.execute(sql`create unique index children_code on children (lower(code))`)
        await tx.execute(sql`create table good_children (
          id text not null, account_id text not null, parent_id text, primary key (account_id, id),
          foreign key (account_id, parent_id) references parents (account_id, id))`)
        await tx.execute(
          sql`create unique index good_children_parent on good_children (account_id, parent_id)`,
        )
        await tx.execute(
          sql`create table settings (id text primary key, parent_id text references parents (id))`,
        )
        await tx.execute(sql`create table events (id text primary key, account_id text)`)
        breaks = await shardingBreaks(tx)
        throw rolledBack
      })
      .catch((error) => {
        if (error !== rolledBack) throw error
      })
    expect(breaks).toEqual(
      [
        'children: foreign key without account_id on both sides children_parent_id_fkey: (parent_id) -> parents (id)',
        'children: unique index children_code (lower(code)) without account_id',
        'events: account_id may be null, and not a listed table attributed later',
        'parents: primary key (id) without account_id',
        'settings: global, references account-owned settings_parent_id_fkey: (parent_id) -> parents (id)',
        'settings: no account_id, and not a listed global table',
        // The service's tables are not in this schema: each exception is reported as stale.
        ...Object.keys(GLOBAL_TABLES).map((name) => `exception ${name}: no such table without account_id`),
        ...Object.keys(ATTRIBUTED_LATER_TABLES).map(
          (name) => `exception ${name}: no such table with a nullable account_id`,
        ),
        ...[...Object.keys(GLOBAL_UNIQUE_KEYS), ...Object.keys(CONTRACT_IN_NEXT_RELEASE)].map(
          (name) => `exception ${name}: no such unique index without account_id on an account-owned table`,
        ),
      ].sort(),
    )
  })
})
