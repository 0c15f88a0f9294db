import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createEmptyTestDatabase,
  createTestDatabase,
  type TestDatabase,
} from '../../../test/helpers/database.js'
import { type DatabaseHandle, migrateDatabase, pendingMigrationsOf } from './connection.js'
import {
  MIGRATIONS_FOLDER,
  type MigrationLog,
  NO_TRANSACTION_DIRECTIVE,
  readMigrations,
} from './migrations.js'

const serverUrl = process.env.DATABASE_URL
const projectTags = readMigrations().map(({ tag }) => tag)

/** Drizzle's own migrator, as the code before this runner migrated with: all pending in one transaction. */
async function migrateWithDrizzle(handle: DatabaseHandle, migrationsFolder: string) {
  const { migrate } =
    handle.kind === 'pglite'
      ? await import('drizzle-orm/pglite/migrator')
      : await import('drizzle-orm/node-postgres/migrator')
  await migrate(handle.db as never, { migrationsFolder })
}

/** A folder of the project's migrations up to `last` (its journal cut there): a release of the past. */
function projectUpTo(last: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'migrations-past-'))
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'))
  const entries = journal.entries.slice(0, projectTags.indexOf(last) + 1)
  mkdirSync(join(folder, 'meta'))
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }))
  for (const { tag } of entries)
    symlinkSync(join(MIGRATIONS_FOLDER, `${tag}.sql`), join(folder, `${tag}.sql`))
  return folder
}

/** The `when` of the last test migration made: each is dated after the project's and every one before it. */
let lastWhen = Math.max(...readMigrations().map(({ when }) => when))

/** A migrations folder of the given SQL files, in order, dated after the project's. */
function testMigrations(...files: string[]): { folder: string; tags: string[] } {
  const folder = mkdtempSync(join(tmpdir(), 'migrations-test-'))
  mkdirSync(join(folder, 'meta'))
  const tags = files.map((_, index) => `${String(9000 + index)}_test`)
  const entries = tags.map((tag, index) => ({ idx: index, when: ++lastWhen, tag }))
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify({ version: '7', entries }))
  for (const [index, text] of files.entries()) writeFileSync(join(folder, `${tags[index]}.sql`), text)
  return { folder, tags }
}

const BREAK = '\n--> statement-breakpoint\n'

async function rows<T>(database: TestDatabase, text: string): Promise<T[]> {
  const result = await database.handle.db.execute(sql.raw(text))
  return (result as { rows: T[] }).rows
}

describe('the migration runner', () => {
  it("takes on a database that Drizzle's migrator brought to an older release, applying only what it lacks", async () => {
    const database = await createEmptyTestDatabase()
    try {
      await migrateWithDrizzle(database.handle, projectUpTo('0030_room_list_by_member_activity'))
      const options = { databaseUrl: database.url }
      const lacking = projectTags.slice(projectTags.indexOf('0030_room_list_by_member_activity') + 1)
      expect(await pendingMigrationsOf(database.handle, options)).toEqual(lacking)

      expect(await migrateDatabase(database.handle, options)).toEqual(lacking)

      expect(await pendingMigrationsOf(database.handle, options)).toEqual([])
      // Recorded as Drizzle records them, so Drizzle's migrator finds nothing to do either.
      const applied = await rows<{ hash: string; created_at: string }>(
        database,
        'select hash, created_at from drizzle.__drizzle_migrations order by id',
      )
      expect(applied.map(({ hash, created_at }) => [hash, Number(created_at)])).toEqual(
        readMigrations().map(({ hash, when }) => [hash, when]),
      )
      await migrateWithDrizzle(database.handle, MIGRATIONS_FOLDER)
      expect(await rows(database, 'select id from drizzle.__drizzle_migrations')).toHaveLength(
        projectTags.length,
      )
    } finally {
      await database.drop()
    }
  })

  it('applies up to a given migration, and says what is pending beyond it', async () => {
    const database = await createEmptyTestDatabase()
    try {
      const options = { databaseUrl: database.url }
      expect(await migrateDatabase(database.handle, options, { to: '0002_email' })).toEqual(
        projectTags.slice(0, 3),
      )
      expect(await pendingMigrationsOf(database.handle, options)).toEqual(projectTags.slice(3))
    } finally {
      await database.drop()
    }
  })

  it('applies the safe forms README and .squawk.toml point to (docs/migration-examples) on a migrated database', async () => {
    const database = await createTestDatabase()
    try {
      const examples = fileURLToPath(new URL('../../../docs/migration-examples', import.meta.url))
      expect(
        await migrateDatabase(database.handle, { databaseUrl: database.url }, { folders: [examples] }),
      ).toEqual(['0001_expand', '0002_validate', '0003_concurrent_index'])
      expect(
        await rows(
          database,
          `select (select convalidated from pg_constraint where conname = 'contacts_preferred_name_length') as validated,
             (select indisvalid from pg_index where indexrelid = 'contacts_account_preferred_name'::regclass) as indexed`,
        ),
      ).toEqual([{ validated: true, indexed: true }])
    } finally {
      await database.drop()
    }
  })

  describe('on a migrated database', () => {
    let database: TestDatabase
    beforeAll(async () => {
      database = await createTestDatabase()
    })
    afterAll(() => database.drop())
    const migrateFrom = (folder: string, options: object = {}) =>
      migrateDatabase(database.handle, { databaseUrl: database.url }, { folders: [folder], ...options })

    it('has nothing pending, even when it is newer than the code (the next release migrated first)', async () => {
      const next = testMigrations('create table next_release (id int)')
      await migrateFrom(next.folder)
      expect(await pendingMigrationsOf(database.handle, { databaseUrl: database.url })).toEqual([])
      expect(await migrateDatabase(database.handle, { databaseUrl: database.url })).toEqual([])
    })

    it('applies each migration in a transaction of its own: a failing one leaves the ones before it applied', async () => {
      const { folder, tags } = testMigrations(
        'create table applied_first (id int)',
        `create table rolled_back (id int)${BREAK}select 1 / 0`,
      )
      await expect(migrateFrom(folder)).rejects.toThrow(/division by zero/)
      expect(await rows(database, "select to_regclass('applied_first') as t")).toEqual([
        { t: 'applied_first' },
      ])
      expect(await rows(database, "select to_regclass('rolled_back') as t")).toEqual([{ t: null }])
      expect(
        await pendingMigrationsOf(database.handle, { databaseUrl: database.url }, { folders: [folder] }),
      ).toEqual([tags[1]])
    })

    it(`runs a migration that starts with "${NO_TRANSACTION_DIRECTIVE}" outside a transaction, and rebuilds an index a failed concurrent build left invalid`, async () => {
      await rows(database, 'create table twice (v int)')
      await rows(database, 'insert into twice values (1), (1)')
      const { folder } = testMigrations(
        `${NO_TRANSACTION_DIRECTIVE}\ncreate unique index concurrently if not exists twice_v on twice (v)`,
      )
      // The duplicate fails the build, which leaves twice_v behind, invalid (as a lock timeout or a crash would).
      await expect(migrateFrom(folder)).rejects.toThrow(/could not create unique index/)
      expect(
        await rows(database, "select indisvalid from pg_index where indexrelid = 'twice_v'::regclass"),
      ).toEqual([{ indisvalid: false }])
      await rows(database, 'delete from twice where ctid = (select min(ctid) from twice)')

      await migrateFrom(folder)
      expect(
        await rows(database, "select indisvalid from pg_index where indexrelid = 'twice_v'::regclass"),
      ).toEqual([{ indisvalid: true }])
    })
  })
})

describe.skipIf(!serverUrl)('the migration runner on PostgreSQL, while other sessions hold locks', () => {
  let database: TestDatabase
  let holder: pg.Client
  beforeAll(async () => {
    database = await createTestDatabase()
    holder = new pg.Client({ connectionString: database.url })
    await holder.connect()
  })
  afterAll(async () => {
    await holder.end()
    await database.drop()
  })

  const warnings: string[] = []
  const log: MigrationLog = { info: () => undefined, warn: (message) => warnings.push(message) }
  const migrateFrom = (folder: string) =>
    migrateDatabase(
      database.handle,
      { databaseUrl: database.url },
      {
        folders: [folder],
        log,
        lockTimeoutMs: 200,
        retryDelayMs: 100,
        maxRetryDelayMs: 200,
        lockAttempts: 30,
      },
    )

  /** How long a read of `table` takes on a connection of its own. */
  async function readTime(table: string): Promise<number> {
    const reader = new pg.Client({ connectionString: database.url })
    await reader.connect()
    const started = Date.now()
    await reader.query(`select count(*) from ${table}`).finally(() => reader.end())
    return Date.now() - started
  }

  it('waits for a lock in short tries, so that reads of the table are never queued behind it for long', async () => {
    await rows(database, 'create table busy (id int)')
    // A transaction that read the table and is still open: the migration's ALTER cannot have its lock.
    await holder.query('begin')
    await holder.query('select count(*) from busy')
    const { folder, tags } = testMigrations('alter table busy add column added int')
    const migrating = migrateFrom(folder)
    await new Promise((resolve) => setTimeout(resolve, 300))

    // Without lock_timeout this read would queue behind the waiting ALTER until the holder ended.
    expect(await readTime('busy')).toBeLessThan(1000)
    await new Promise((resolve) => setTimeout(resolve, 700))
    await holder.query('commit')

    await migrating
    expect(warnings.length).toBeGreaterThanOrEqual(2)
    expect(warnings[0]).toMatch(
      new RegExp(`migration ${tags[0]} did not get its lock within 200 ms \\(try 1 of 30\\)`),
    )
    expect(
      await rows(database, "select 1 from information_schema.columns where column_name = 'added'"),
    ).toHaveLength(1)
  })

  it('gives up after its tries, applying nothing of the migration', async () => {
    await rows(database, 'create table held (id int)')
    await holder.query('begin')
    await holder.query('lock table held in access exclusive mode')
    const { folder } = testMigrations('alter table held add column never int')
    const gaveUp = await migrateDatabase(
      database.handle,
      { databaseUrl: database.url },
      { folders: [folder], lockTimeoutMs: 100, retryDelayMs: 10, lockAttempts: 3 },
    ).catch((error: { code?: string }) => error.code)
    await holder.query('commit')
    expect(gaveUp).toBe('55P03')
    expect(
      await rows(database, "select 1 from information_schema.columns where column_name = 'never'"),
    ).toEqual([])
  })

  it('applies a migration once when several processes migrate at once', async () => {
    const { folder, tags } = testMigrations('create table made_once (id int)')
    const runs = await Promise.all([migrateFrom(folder), migrateFrom(folder), migrateFrom(folder)])
    expect(runs.flat()).toEqual(tags)
  })
})
