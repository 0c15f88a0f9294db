import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders, captureLogs } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { MAX_LOGGED_TEXT, serializeError } from './error-serializer.js'

const logs = captureLogs()
test.override('appEnv', { LOG_LEVEL: 'info' })
test.override('appOptions', { logStream: logs.stream })

describe('errors in the log', () => {
  test('names a failed insert of a user by SQL state and constraint, without its hash or email', async ({
    t,
    owner,
  }) => {
    const { db } = t.app.platform
    // The database refuses the next user, as a check constraint added by a later migration would.
    await db.execute(
      sql`alter table users add constraint users_refused check (email <> 'secret.person@example.com')`,
    )
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/users',
      headers: adminHeaders,
      payload: {
        email: 'secret.person@example.com',
        password: 'correct horse battery',
        name: 'Secret Person',
        account_id: owner.accountId,
      },
    })
    expect(response.statusCode).toBe(500)
    const output = JSON.stringify(logs.lines)
    expect(output).not.toContain('secret.person@example.com')
    expect(output).not.toContain('$argon2')
    expect(output).not.toContain('correct horse battery')
    const failure = logs.lines.find((line) => line.msg === 'unhandled error')
    expect(failure?.err).toMatchObject({ sql_state: '23514', constraint: 'users_refused', table: 'users' })
  })

  test('cuts a long message', () => {
    const serialized = serializeError(new Error(`refused: ${'x'.repeat(1_000_000)}`))
    expect(serialized.message.length).toBeLessThan(MAX_LOGGED_TEXT + 40)
    expect(serialized.stack.length).toBeLessThan(MAX_LOGGED_TEXT + 10_000)
  })
})

describe('requests in the log', () => {
  test('are logged by their path, without the query string', async ({ t }) => {
    await t.app.inject({
      url: '/v1/funnels/cloudflare/step?hostname=a.example.com&pathname=/&_ts=1&_sig=f00d',
    })
    const requests = logs.lines.filter((line) => line.method === 'GET')
    expect(requests.at(-1)).toMatchObject({ route: '/v1/funnels/cloudflare/step' })
    expect(JSON.stringify(logs.lines)).not.toContain('f00d')
  })
})
