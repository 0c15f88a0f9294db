import { randomInt } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { describe, expect } from 'vitest'
import { adminHeaders, bearer, withTwoInstancesSharingRedis } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../db/ids.js'
import { ADMIN_AUTH_FAILURES } from './plugin.js'

/**
 * Wrong admin tokens are limited per address (an IPv6 /64), across instances: past ADMIN_AUTH_FAILURES in
 * 15 minutes the address is answered 429 with Retry-After, whatever it sends; other addresses go on.
 */

/** An address of its own in the documentation prefix, so that runs sharing one Redis do not meet. */
const newAddress = () => `2001:db8:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}::1`

const WRONG = bearer('not-the-admin-token-but-as-long-as-it')

const adminCall = (
  app: FastifyInstance,
  remoteAddress: string,
  headers: { authorization: string },
  accountId = newId(),
) => app.inject({ url: `/v1/admin/accounts/${accountId}`, headers, remoteAddress })

/** Sends `count` wrong tokens from the address, each answered 401. */
async function guessWrong(app: FastifyInstance, address: string, count: number) {
  for (let guess = 0; guess < count; guess++) {
    expect((await adminCall(app, address, WRONG)).statusCode).toBe(401)
  }
}

/** The address is blocked: 429 in the envelope, with the seconds to wait in Retry-After and in the body. */
async function expectBlocked(app: FastifyInstance, address: string, headers: { authorization: string }) {
  const refused = await adminCall(app, address, headers)
  expect(refused.statusCode).toBe(429)
  const seconds = Number(refused.headers['retry-after'])
  expect(seconds).toBeGreaterThan(0)
  expect(seconds).toBeLessThanOrEqual(15 * 60)
  expect(refused.json()).toEqual({
    success: false,
    errno: 429,
    message: 'Too many requests',
    additional_info: { retry_after: seconds },
  })
}

describe('wrong admin tokens', () => {
  test('block their address after the limit, the right token from it too, never another address', async ({
    t,
    owner,
  }) => {
    const guesser = newAddress()
    await guessWrong(t.app, guesser, ADMIN_AUTH_FAILURES)
    await expectBlocked(t.app, guesser, WRONG)
    // Else a guesser would still tell the right guess from the others.
    await expectBlocked(t.app, guesser, adminHeaders)
    // The same /64: one subscriber's addresses are one source.
    await expectBlocked(t.app, guesser.replace(/::1$/, '::2'), adminHeaders)

    const operator = newAddress()
    expect((await adminCall(t.app, operator, adminHeaders, owner.accountId)).statusCode).toBe(200)
    expect((await adminCall(t.app, operator, WRONG)).statusCode).toBe(401)
  })
})

describe.runIf(process.env.REDIS_URL)('wrong admin tokens, with Redis', () => {
  test('are counted by every instance together', async ({ appEnv }) => {
    await withTwoInstancesSharingRedis(appEnv, async (t, other) => {
      const guesser = newAddress()
      const half = ADMIN_AUTH_FAILURES / 2
      await guessWrong(t.app, guesser, half)
      await guessWrong(other, guesser, ADMIN_AUTH_FAILURES - half)
      await expectBlocked(t.app, guesser, WRONG)
      await expectBlocked(other, guesser, adminHeaders)
      // Past authentication: no such account.
      expect((await adminCall(other, newAddress(), adminHeaders)).statusCode).toBe(404)
    })
  })
})
