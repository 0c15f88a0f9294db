import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { inject } from 'vitest'
import {
  type DatabaseHandle,
  type DatabaseOptions,
  migrateDatabase,
  openDatabase,
} from '../../src/platform/db/connection.js'
import { DATABASE_WAIT_DEFAULTS, type DatabaseWaits } from '../../src/platform/db/waits.js'

export interface TestDatabase {
  handle: DatabaseHandle
  /** The PostgreSQL URL of this file's own database; undefined on PGlite. */
  url: string | undefined
  drop(): Promise<void>
}

/**
 * A migrated database of the test file's own, a copy of the run's migrated template (database-run.ts): an
 * in-memory PGlite by default, or, when DATABASE_URL is set, a PostgreSQL database created beside it, so
 * that files run in parallel.
 */
export async function createTestDatabase(
  options: { waits?: DatabaseWaits; poolSize?: number } = {},
): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL
  const template = inject('migratedTemplate')
  if (!serverUrl) {
    const handle = await openDatabase({ pgliteDump: new Blob([readFileSync(template)]) })
    return { handle, url: undefined, drop: () => handle.close() }
  }
  // Named after the run, so that the run's teardown (database-run.ts) finds whatever a failing file left.
  const name = `${inject('testDatabasePrefix')}${randomBytes(6).toString('hex')}`
  await adminQuery(serverUrl, `create database ${name} template ${template}`)
  // Bounded as the server's are (by default its defaults), so that the tests meet the timeouts production does.
  return openOwnDatabase(serverUrl, name, {
    poolSize: options.poolSize ?? 5,
    waits: options.waits ?? DATABASE_WAIT_DEFAULTS,
  })
}

/** Database `name` of this run, opened, and dropped by its `drop` even when closing it fails. */
async function openOwnDatabase(
  serverUrl: string,
  name: string,
  options: Pick<DatabaseOptions, 'poolSize' | 'waits'>,
): Promise<TestDatabase> {
  const url = databaseOnServer(serverUrl, name)
  const handle = await openDatabase({ databaseUrl: url, ...options })
  return {
    handle,
    url,
    drop: async () => {
      try {
        await handle.close()
      } finally {
        await dropWhenDisconnected(serverUrl, name)
      }
    },
  }
}

/** The URL of database `name` on the server of `serverUrl`. */
function databaseOnServer(serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function adminQuery(
  serverUrl: string,
  statement: string,
  values: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    return await client.query(statement, values)
  } finally {
    await client.end()
  }
}

/**
 * A database of the test file's own with nothing in it, not even Drizzle's table of applied migrations: an
 * in-memory PGlite, or a PostgreSQL database of this run (its teardown drops what a failing file left).
 */
export async function createEmptyTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL
  if (!serverUrl) {
    const handle = await openDatabase({})
    return { handle, url: undefined, drop: () => handle.close() }
  }
  const name = `${inject('testDatabasePrefix')}empty_${randomBytes(6).toString('hex')}`
  await adminQuery(serverUrl, `create database ${name}`)
  return openOwnDatabase(serverUrl, name, { poolSize: 2 })
}

/** Creates the PostgreSQL database `name` and migrates it; returns its name. */
export async function createMigratedTemplate(serverUrl: string, name: string): Promise<string> {
  await adminQuery(serverUrl, `create database ${name}`)
  const url = databaseOnServer(serverUrl, name)
  const handle = await openDatabase({ databaseUrl: url, poolSize: 1 })
  try {
    await migrateDatabase(handle, { databaseUrl: url })
  } finally {
    await handle.close()
  }
  return name
}

/**
 * Drops every database whose name starts with `prefix`, connections or not: run when every test file
 * of a run has ended, for the databases of files that failed before their own drop. Returns their names.
 */
export async function dropDatabasesStartingWith(serverUrl: string, prefix: string): Promise<string[]> {
  const { rows } = await adminQuery(
    serverUrl,
    'select datname from pg_database where starts_with(datname, $1)',
    [prefix],
  )
  const names = rows.map((row: { datname: string }) => row.datname)
  for (const name of names) await adminQuery(serverUrl, `drop database if exists "${name}" with (force)`)
  return names
}

/**
 * Closed pools may still be saying goodbye to the server for a moment; dropping "with (force)"
 * would kill those sockets and surface as unhandled errors in the test run, so wait for them.
 */
async function dropWhenDisconnected(serverUrl: string, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(serverUrl, `drop database if exists ${name}`)
      return
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
