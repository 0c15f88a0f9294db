import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { unreachableRedis } from '../../../test/helpers/unreachable-redis.js'
import { TooManyRequests } from './errors.js'
import { createFailureLimit, createHourlyLimit } from './limits.js'
import { unavailabilityOf } from './unavailable.js'

describe('limits while Redis does not answer', () => {
  it('an hourly quota counts in the instance’s memory instead (fails open by the number of instances)', async () => {
    const down = await unreachableRedis()
    try {
      const limit = createHourlyLimit(down, `test-${randomBytes(4).toString('hex')}`)
      await limit('app', 2)
      await limit('app', 2)
      await expect(limit('app', 2)).rejects.toBeInstanceOf(TooManyRequests)
    } finally {
      down.disconnect()
    }
  })

  it('a lockout fails closed: its check fails as Redis unavailable (503 with Retry-After), never as not blocked', async () => {
    const down = await unreachableRedis()
    try {
      const lockout = createFailureLimit(down, `test-${randomBytes(4).toString('hex')}`, {
        failures: 3,
        seconds: 60,
      })
      const refusal = await lockout.blocked('someone').catch((error: unknown) => error)
      expect(refusal).toBeInstanceOf(Error)
      expect(unavailabilityOf(refusal)).toMatchObject({ dependency: 'redis', retryAfterSeconds: 2 })
      await expect(lockout.failed('someone')).rejects.toThrow()
    } finally {
      down.disconnect()
    }
  })
})
