import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The PostgreSQL server `--postgres` creates its database on; BENCH_POSTGRES_URL names another. */
export const POSTGRES_SERVER_URL =
  process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_SERVER_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** A fresh, empty database for one run (the server migrates it on start); returns its URL. */
export async function createBenchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  // Random lower-case hex: a valid unquoted identifier, and no other run's name.
  const name = `bench_${randomBytes(6).toString('hex')}`
  await adminQuery(`create database ${name}`)
  const url = new URL(POSTGRES_SERVER_URL)
  url.pathname = `/${name}`
  // FORCE ends the connections a killed server may have left behind.
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists ${name} with (force)`) }
}
