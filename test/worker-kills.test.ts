import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/app.js'
import { startWorkerKillsRig, type WorkerKillsRig } from './helpers/worker-kills.js'

/**
 * Jobs are at-least-once; their outside effects must happen once. Two worker processes on
 * PostgreSQL go through a stream of review webhooks, lead webhooks and contact changes while one of them is
 * SIGKILLed at random moments: every email, SMS, lead capture and app webhook lands once, and no job is left
 * behind. Two processes cannot share the embedded database: PostgreSQL only.
 */
describe.skipIf(!process.env.DATABASE_URL)('jobs whose worker is killed', () => {
  let rig: WorkerKillsRig
  let t: TestApp

  beforeAll(async () => {
    rig = await startWorkerKillsRig()
    t = await buildTestApp({ ...rig.env, RUN_WORKERS: 'false', JOBS_LOCK_SECONDS: '4' })
  }, 120_000)
  afterAll(async () => {
    await t?.close()
    await rig?.close()
  }, 120_000)

  it('still sends every email, SMS and app webhook once, captures every lead once, and leaves no job', async () => {
    const result = await rig.run(t, {
      reviews: 10,
      leads: 6,
      contacts: 6,
      kills: 5,
      lockSeconds: 4,
      settleTimeoutMs: 150_000,
    })
    console.info('worker kills:', JSON.stringify(result))
    expect(result.kills).toBe(5)
    for (const count of [result.emails, result.sms, result.leadCaptures, result.appWebhooks])
      expect(count).toMatchObject({ missing: 0, duplicated: 0, once: count.expected })
    expect(result.unfinishedJobs).toEqual([])
    // The kills cut runs short: jobs ran again.
    expect(result.retriedJobs).toBeGreaterThan(0)
  }, 300_000)
})
