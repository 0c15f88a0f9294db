import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { type DatabaseHandle, migrateDatabase, openDatabase } from '../../src/platform/db/connection.js'

export interface TestDatabase {
  handle: DatabaseHandle
  /** The PostgreSQL URL of this file's own database; undefined on PGlite. */
  url: string | undefined
  drop(): Promise<void>
}

/**
 * A migrated database of the test file's own: an in-memory PGlite by default, or, when DATABASE_URL
 * is set, a fresh PostgreSQL database created beside it, so that files run in parallel.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL
  if (!serverUrl) {
    const handle = await openDatabase({})
    await migrateDatabase(handle, {})
    return { handle, url: undefined, drop: () => handle.close() }
  }
  const name = `test_${randomBytes(6).toString('hex')}`
  await adminQuery(serverUrl, `create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 })
  await migrateDatabase(handle, { databaseUrl: url.toString() })
  return {
    handle,
    url: url.toString(),
    drop: async () => {
      await handle.close()
      await dropWhenDisconnected(serverUrl, name)
    },
  }
}

async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
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
