import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { bearer, captureLogs } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { requestLogger } from './request-logger.js'

const serviceLines = captureLogs()
test.override('appEnv', { LOG_LEVEL: 'info' })
test.override('appOptions', { logStream: serviceLines.stream })

function serviceLogger(level: string) {
  const logs = captureLogs()
  return { logs, parent: pino({ level, base: { service: 'test' } }, logs.stream) }
}

describe('a request logger', () => {
  it("writes the lines of enabled levels with the request's bindings and the service's", () => {
    const { logs, parent } = serviceLogger('warn')
    const log = requestLogger(parent, { reqId: 'r-1' }, {})
    log.info('not written at warn')
    log.debug({ detail: 1 }, 'nor this')
    log.warn({ attempt: 2 }, 'slow answer %s', 'from the provider')
    log.error(new Error('refused'))
    expect(logs.lines).toHaveLength(2)
    expect(logs.lines[0]).toMatchObject({
      level: 40,
      reqId: 'r-1',
      service: 'test',
      attempt: 2,
      msg: 'slow answer from the provider',
    })
    expect(logs.lines[1]).toMatchObject({ level: 50, reqId: 'r-1', err: { message: 'refused' } })
    expect(log.level).toBe('warn')
  })

  it('gives children both bindings, and follows a level set on it', () => {
    const { logs, parent } = serviceLogger('info')
    const log = requestLogger(parent, { reqId: 'r-2' }, {})
    log.child({ job: 'send' }).info('child line')
    log.level = 'error'
    log.warn('below the new level')
    log.error('at it')
    expect(logs.lines.map(({ reqId, job, msg }) => ({ reqId, job, msg }))).toEqual([
      { reqId: 'r-2', job: 'send', msg: 'child line' },
      { reqId: 'r-2', job: undefined, msg: 'at it' },
    ])
    expect(parent.level).toBe('info')
  })

  it("takes a route's own level", () => {
    const { logs, parent } = serviceLogger('warn')
    requestLogger(parent, { reqId: 'r-3' }, { level: 'debug' }).debug('route detail')
    expect(logs.lines).toMatchObject([{ reqId: 'r-3', msg: 'route detail' }])
  })
})

describe("the service's request lines", () => {
  test('are one line per request, with its id, route pattern, status, time and calling account', async ({
    t,
    owner,
  }) => {
    await t.app.inject({
      url: '/v1/contacts?email=a@b.example',
      headers: { ...bearer(owner.token), 'x-request-id': 'trace-77' },
    })
    const lines = serviceLines.lines.filter((line) => line.reqId === 'trace-77')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/v1/contacts',
      status: expect.any(Number),
      ms: expect.any(Number),
      account_id: owner.accountId,
    })
    expect(lines[0]?.msg).toMatch(/^GET \/v1\/contacts \d{3} [\d.]+ ms$/)
  })

  test('name a request that matched no route by its path, without the query string', async ({ t }) => {
    await t.app.inject({ url: '/nowhere/at-all?code=s3cret', headers: { 'x-request-id': 'trace-78' } })
    const lines = serviceLines.lines.filter((line) => line.reqId === 'trace-78')
    expect(lines).toMatchObject([{ path: '/nowhere/at-all', status: 404 }])
    expect(JSON.stringify(lines)).not.toContain('s3cret')
  })
})
