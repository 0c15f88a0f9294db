import { mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { ConfigError, loadConfig } from '../../config.js'

const HEADERS_MS = 500
const REQUEST_MS = 1000
/** How long each trickle lasts, uncut: 100 bytes, one every 100 ms. */
const TRICKLE_MS = 10_000

/**
 * Sends `head` at once, then `trickle` a byte every 100 ms (a slow client keeping the request open), and
 * resolves with what the server answered and how long it kept the connection once the trickle began.
 */
function trickle(baseUrl: string, head: string, trickled: string) {
  return new Promise<{ answer: string; openMs: number }>((resolve, reject) => {
    let started = Date.now()
    let answer = ''
    let sent = 0
    let drip: NodeJS.Timeout | undefined
    // The drip starts once the head is written: a byte before it would be another request.
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1', () => {
      started = Date.now()
      socket.write(head)
      drip = setInterval(() => {
        if (sent < trickled.length && socket.writable) socket.write(trickled[sent++] as string)
      }, 100)
    })
    // Once answered, the client stops sending, as a real one would: a byte that reached the server after it
    // closed would be answered by a reset, which can overtake the answer.
    socket.on('data', (chunk) => {
      clearInterval(drip)
      answer += chunk.toString('utf8')
    })
    const ended = () => {
      clearInterval(drip)
      resolve({ answer, openMs: Date.now() - started })
    }
    socket.on('close', ended)
    socket.on('error', (error: Error & { code?: string }) =>
      error.code === 'ECONNRESET' && answer ? ended() : reject(error),
    )
  })
}

let t: TestApp & { baseUrl: string }
beforeAll(async () => {
  t = await listenTestApp({
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
  })
}, 60_000)
afterAll(() => t?.close())

describe('a client that sends its request slowly is cut off', () => {
  // Without the timeouts, Node waits 60 s for headers and Fastify forever for a body: both would trickle on.
  const cutOff = (answer: string) => {
    expect(answer).toMatch(/^HTTP\/1.1 408 Request Timeout\r\n/)
    expect(JSON.parse(answer.split('\r\n\r\n')[1] as string)).toEqual({
      success: false,
      errno: 408,
      message: 'Request Timeout',
    })
  }

  test('headers trickled past HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { answer, openMs } = await trickle(
      t.baseUrl,
      'GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
      'a'.repeat(100),
    )
    cutOff(answer)
    expect(openMs).toBeGreaterThanOrEqual(HEADERS_MS - 50)
    expect(openMs).toBeLessThan(TRICKLE_MS / 2)
  })

  test('a body trickled past HTTP_REQUEST_TIMEOUT_MS, headers in time', async () => {
    const { answer, openMs } = await trickle(
      t.baseUrl,
      'POST /v1/funnels/forms/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
      ' '.repeat(100),
    )
    cutOff(answer)
    expect(openMs).toBeGreaterThanOrEqual(REQUEST_MS - 50)
    expect(openMs).toBeLessThan(TRICKLE_MS / 2)
  })

  test('headers may not be given longer than the whole request', () => {
    const env = { NODE_ENV: 'test', DATA_DIR: mkdtempSync(join(tmpdir(), 'timeouts-')) }
    expect(() =>
      loadConfig({ ...env, HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '2000' }),
    ).toThrow(new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS'))
  })
})
