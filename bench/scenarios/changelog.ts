import { createMember } from '../admin.js'
import type { Scenario } from '../scenario.js'

/** The cheapest authenticated route: what JWT verification and the response path cost. */
export const changelog: Scenario = {
  description: 'authenticated GET /v1/e/changelog/posts (Bearer platform JWT, empty feed)',
  target: 0.6,
  async prepare(target) {
    const { token } = await createMember(target)
    return { method: 'GET', path: '/v1/e/changelog/posts', headers: { authorization: `Bearer ${token}` } }
  },
}
