import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { migrateDatabase, openDatabase } from '../src/platform/db/connection.js'

/** The PostgreSQL server `--postgres` creates its database on; BENCH_POSTGRES_URL names another. */
export const POSTGRES_SERVER_URL =
  process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** One statement on the maintenance database (creating and dropping databases); its rows. */
export async function adminQuery(statement: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER_URL })
  await client.connect()
  try {
    return (await client.query(statement, values)).rows
  } finally {
    await client.end()
  }
}

/** The URL of database `name` on the bench's PostgreSQL server. */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_SERVER_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * A fresh database for one run, migrated as a deployment migrates before the release starts (`npm run
 * db:migrate`'s runner): a production server on PostgreSQL refuses a database lacking migrations. Its URL.
 */
export async function createBenchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  // Random lower-case hex: a valid unquoted identifier, and no other run's name.
  const name = `bench_${randomBytes(6).toString('hex')}`
  await adminQuery(`create database ${name}`)
  const url = databaseUrl(name)
  try {
    const handle = await openDatabase({ databaseUrl: url, poolSize: 1 })
    try {
      await migrateDatabase(handle, { databaseUrl: url })
    } finally {
      await handle.close()
    }
  } catch (error) {
    await dropDatabase(name)
    throw error
  }
  return { url, drop: () => dropDatabase(name) }
}

/** Drops database `name`; FORCE ends the connections a killed server may have left behind. */
export async function dropDatabase(name: string): Promise<void> {
  await adminQuery(`drop database if exists ${name} with (force)`)
}
