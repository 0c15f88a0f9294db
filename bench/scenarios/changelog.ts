import { randomBytes } from 'node:crypto'
import { createMember } from '../admin.js'
import type { Scenario } from '../scenario.js'

/** The cheapest authenticated route: what JWT verification and the response path cost. */
export const changelog: Scenario = {
  description: 'authenticated GET /v1/e/changelog/posts (Bearer platform JWT, empty feed)',
  target: 0.6,
  frameworkTarget: 0.85,
  // As a monitored deployment runs: every request is counted in the metrics' duration histogram.
  serverEnv: { METRICS_TOKEN: randomBytes(24).toString('hex') },
  async prepare(target) {
    const { token } = await createMember(target)
    return { method: 'GET', path: '/v1/e/changelog/posts', headers: { authorization: `Bearer ${token}` } }
  },
}
