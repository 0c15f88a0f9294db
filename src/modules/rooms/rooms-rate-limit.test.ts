import { expect } from 'vitest'
import { addUser } from '../../../test/helpers/fixtures.js'
import { roomCall } from '../../../test/helpers/rooms.js'
import { test } from '../../../test/helpers/tenant-test.js'

test.override('appEnv', { RATE_LIMIT_ROOMS_PER_MINUTE: '3' })

test('room endpoints are limited per user (RATE_LIMIT_ROOMS_PER_MINUTE)', async ({ t, owner }) => {
  const colleague = await addUser(t.app, owner.accountId, 'Colleague')
  for (let i = 0; i < 3; i++) expect((await roomCall(t.app, owner, 'GET', '/')).statusCode).toBe(200)
  const limited = await roomCall(t.app, owner, 'GET', '/favorites')
  expect(limited.statusCode).toBe(429)
  expect(limited.json()).toMatchObject({ success: false, errno: 429, message: 'Too many requests' })
  // Another user of the same account has a budget of its own.
  expect((await roomCall(t.app, colleague, 'GET', '/')).statusCode).toBe(200)
})
