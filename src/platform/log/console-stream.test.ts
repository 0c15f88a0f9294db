import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { consoleLogStream, logFormat } from './console-stream.js'

/** A stdout that keeps what is written to it; a terminal or not. */
function stdout(isTTY: boolean) {
  const written: string[] = []
  return { isTTY, written, write: (text: string) => written.push(text) }
}

const LINE = `${JSON.stringify({
  level: 30,
  time: Date.UTC(2026, 10, 29, 3, 4, 5, 678),
  pid: 4242,
  hostname: 'dev-laptop',
  reqId: 'req-1',
  msg: 'GET /status 200 1.2ms',
})}\n`

describe('how log lines are written', () => {
  it.each([
    ['development', true, 'pretty'],
    ['development', false, 'json'],
    ['production', true, 'json'],
    ['production', false, 'json'],
    ['test', true, 'json'],
  ] as const)('%s with stdout a terminal: %s -> %s', (nodeEnv, terminal, format) => {
    expect(logFormat(nodeEnv, terminal)).toBe(format)
  })

  it('writes a development terminal readable lines: the time, the level, the message, the other fields', () => {
    const terminal = stdout(true)
    const stream = consoleLogStream('development', terminal)
    stream?.write(LINE)
    const written = terminal.written.join('')
    expect(written).not.toBe(stripVTControlCharacters(written))
    // Colours aside, one line for the person, without pid and hostname.
    const text = stripVTControlCharacters(written)
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.678\] INFO: GET \/status 200 1\.2ms\n {4}reqId: "req-1"\n$/)
    expect(text).not.toContain('4242')
    expect(text).not.toContain('dev-laptop')
  })

  it('leaves pino its JSON on stdout elsewhere, and where pino-pretty is not installed', () => {
    expect(consoleLogStream('development', stdout(false))).toBeUndefined()
    expect(consoleLogStream('production', stdout(true))).toBeUndefined()
    // As on a production install (npm ci --omit=dev), which has no development dependency.
    expect(consoleLogStream('development', stdout(true), 'pino-pretty-not-installed')).toBeUndefined()
  })
})
