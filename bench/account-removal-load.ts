/**
 * `npx tsx bench/account-removal-load.ts [--scale 0.1 | --seeded URL] [--seconds 20] [--connections 10]`: a small
 * account's p99 on a few read routes without and with the largest account being removed at the same time
 * (within 1.5 times). Seeds a fresh PostgreSQL database with seed:volume (or takes a seeded one,
 * which the removal empties of `Agency 0`), starts the real server on it as `npm start` does, drives the small
 * account's reads with autocannon for `--seconds`, then asks for the removal of `Agency 0` (with its
 * sub-accounts) and drives the same reads for as long again while it runs, and prints both p99s and their ratio.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { stopEverything } from './children.js'
import { createBenchDatabase } from './postgres.js'
import { RETENTION_OFF_FOR_SEEDED_ROWS, seedVolume } from './seed-volume.js'
import { REPO_ROOT, startServer } from './servers.js'
import { prepareStart, readStartCommand } from './start-command.js'

/** The small account's reads: its contacts, its rooms, its funnels. */
const READ_PATHS = ['/v1/contacts?limit=20', '/api/conversation-v2/room?limit=20', '/v1/funnels?limit=20']

interface Reads {
  p50: number
  p99: number
  requests: number
  non2xx: number
  errors: number
}

/** Drives the reads round-robin over `connections` for `seconds`. */
function drive(baseUrl: string, token: string, seconds: number, connections: number): Promise<Reads> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: baseUrl,
        connections,
        duration: seconds,
        headers: { authorization: `Bearer ${token}` },
        requests: READ_PATHS.map((path) => ({ method: 'GET', path })),
      },
      (error, result) => {
        if (error) return reject(error)
        resolve({
          p50: result.latency.p50,
          p99: result.latency.p99,
          requests: result.requests.total,
          non2xx: result.non2xx,
          errors: result.errors,
        })
      },
    )
  })
}

async function admin<T>(baseUrl: string, token: string, method: string, path: string, body?: object) {
  const response = await fetch(`${baseUrl}/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    body: body && JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { data: T }).data
}

const line = (label: string, reads: Reads) =>
  `${label}: p50 ${reads.p50} ms, p99 ${reads.p99} ms over ${reads.requests.toLocaleString('en')} requests ` +
  `(non-2xx ${reads.non2xx}, errors ${reads.errors})`

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: '0.1' },
      seeded: { type: 'string' },
      seconds: { type: 'string', default: '20' },
      connections: { type: 'string', default: '10' },
    },
  })
  const seconds = Number(values.seconds)
  const connections = Number(values.connections)
  const database = values.seeded
    ? { url: values.seeded, drop: async () => undefined }
    : await createBenchDatabase()
  try {
    if (!values.seeded) {
      const seeded = await seedVolume(database.url, { scale: Number(values.scale) })
      const total = Object.values(seeded.rows).reduce((sum, count) => sum + count, 0)
      console.log(
        `seeded ${total.toLocaleString('en')} rows at --scale ${values.scale} in ${seeded.seconds} s`,
      )
    }
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const largest = (await client.query(`select id from accounts where name = 'Agency 0'`)).rows[0]?.id
    // The small account: a top-level account with the fewest contacts, and a member to read as.
    const small = (
      await client.query(`
        select a.id as account_id, m.user_id from accounts a
          join memberships m on m.account_id = a.id
        where a.parent_account is null and a.name <> 'Agency 0' and a.status = 'active'
        order by (select count(*) from contacts c where c.account_id = a.id), a.id limit 1`)
    ).rows[0] as { account_id: string; user_id: string } | undefined
    await client.end()
    if (!largest || !small)
      throw new Error('the database holds no Agency 0, or no small account with a member')

    const start = await readStartCommand(REPO_ROOT)
    await prepareStart(REPO_ROOT, start)
    const server = await startServer({
      start,
      postgres: false,
      // The reads are the measure, not the per-user limit of the room routes.
      env: {
        ...RETENTION_OFF_FOR_SEEDED_ROWS,
        DATABASE_URL: database.url,
        RATE_LIMIT_ROOMS_PER_MINUTE: '1000000',
      },
    })
    const { token } = await admin<{ token: string }>(server.baseUrl, server.adminToken, 'POST', '/tokens', {
      user_id: small.user_id,
      account_id: small.account_id,
      ttl: 86_400,
    })
    await drive(server.baseUrl, token, 3, connections)
    const alone = await drive(server.baseUrl, token, seconds, connections)
    console.log(line('small account alone', alone))

    await admin(server.baseUrl, server.adminToken, 'DELETE', `/accounts/${largest}`)
    const during = await drive(server.baseUrl, token, seconds, connections)
    const removal = await admin<{
      status: string
      rows_deleted: number
      tables_done: number
      tables: unknown[]
    }>(server.baseUrl, server.adminToken, 'GET', `/accounts/${largest}/removal`)
    console.log(line('small account while Agency 0 is removed', during))
    console.log(
      `removal after ${seconds} s: ${removal.status}, ${removal.rows_deleted.toLocaleString('en')} rows deleted, ` +
        `${removal.tables_done} of ${removal.tables.length} tables done`,
    )
    if (alone.non2xx + during.non2xx + alone.errors + during.errors > 0) process.exitCode = 1
    if (removal.status !== 'running')
      console.log('the removal was not running through the whole second phase: read its ratio with care')
    const ratio = during.p99 / alone.p99
    console.log(`p99 ratio (during / alone): ${ratio.toFixed(2)} (target: at most 1.5)`)
    await delay(100)
    await server.stop()
  } finally {
    await stopEverything()
    await database.drop()
  }
}

main().catch((error: Error) => {
  console.error(`error: ${error.message}`)
  process.exitCode = 1
})
