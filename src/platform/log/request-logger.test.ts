import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { captureLogs } from '../../../test/helpers/app.js'
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
  test("carry the request's id", async ({ t }) => {
    await t.app.inject({ url: '/status', headers: { 'x-request-id': 'trace-77' } })
    const lines = serviceLines.lines.filter((line) => line.reqId === 'trace-77').map((line) => line.msg)
    expect(lines).toEqual(['incoming request', 'request completed'])
  })
})
