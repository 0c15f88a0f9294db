import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { migrateDatabase, openDatabase } from '../src/platform/db/connection.js'
import type { TestApp } from '../test/helpers/app.js'
import { startWorkerKillsRig, type WorkerKillsOptions } from '../test/helpers/worker-kills.js'
import { loadLine, machineLine, sampleMachine } from './machine.js'
import { readOptions, UsageError } from './options.js'
import { createBenchDatabase } from './postgres.js'

/**
 * The kill probe: `npm run bench:kills` runs the kill test's rig (test/helpers/worker-kills.ts)
 * at a larger scale on a fresh PostgreSQL database: two worker processes go through a stream of review
 * webhooks, lead webhooks and contact changes while one of them is SIGKILLed at random moments, and the fakes
 * count every email, SMS, lead capture and app webhook. Exits 1 unless each landed once and no job was left.
 */
const usage = () =>
  'usage: npm run bench:kills -- [--reviews 100] [--leads 50] [--contacts 50] [--kills 12] [--lock-seconds 4]'

function parse(argv: string[]): WorkerKillsOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      reviews: { type: 'string', default: '100' },
      leads: { type: 'string', default: '50' },
      contacts: { type: 'string', default: '50' },
      kills: { type: 'string', default: '12' },
      'lock-seconds': { type: 'string', default: '4' },
    },
  })
  const count = (name: keyof typeof values, least: number) => {
    const value = Number(values[name])
    if (!Number.isInteger(value) || value < least)
      throw new UsageError(`--${name} must be an integer of at least ${least}`)
    return value
  }
  return {
    reviews: count('reviews', 1),
    leads: count('leads', 1),
    contacts: count('contacts', 1),
    kills: count('kills', 0),
    lockSeconds: count('lock-seconds', 4),
    settleTimeoutMs: 600_000,
  }
}

const options = readOptions(parse, usage)
if (!options) process.exit(2)
const rig = await startWorkerKillsRig()
const database = await createBenchDatabase()
const env = { ...rig.env, RUN_WORKERS: 'false', JOBS_LOCK_SECONDS: String(options.lockSeconds) }
const config = loadConfig({
  ...env,
  DATABASE_URL: database.url,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'kills-')),
})
const handle = await openDatabase({ databaseUrl: database.url, poolSize: 5 })
let failed = true
try {
  await migrateDatabase(handle, { databaseUrl: database.url })
  const app = await buildApp(config, { database: handle })
  await app.ready()
  const t: TestApp = {
    app,
    config,
    database: { handle, url: database.url, drop: database.drop },
    close: () => app.close(),
  }
  try {
    const before = sampleMachine()
    const result = await rig.run(t, options)
    console.log(JSON.stringify({ options, ...result }, null, 2))
    console.log(machineLine(undefined))
    console.log(loadLine(before, sampleMachine()))
    const counts = [result.emails, result.sms, result.leadCaptures, result.appWebhooks]
    failed = counts.some((count) => count.once !== count.expected) || result.unfinishedJobs.length > 0
  } finally {
    await app.close()
  }
} finally {
  await handle.close()
  await database.drop()
  await rig.close()
}
console.log(
  failed ? 'FAILED: an effect missed or repeated, or a job was left' : 'PASS: every effect once, no job left',
)
process.exit(failed ? 1 : 0)
