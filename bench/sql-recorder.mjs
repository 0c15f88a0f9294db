/**
 * Preloaded into the server by the bench (`--import`, only when a scenario replays its route's SQL; see
 * sql-baseline.ts): records every statement the server sends through `pg` while it handles a request
 * carrying the header `x-bench-record-sql: <label>`, and appends it, as one JSON line, to the file named
 * by BENCH_SQL_RECORDING once the response is sent (and a moment more, for statements sent just after).
 * SIGUSR2 takes it all out again, so that the timed requests run the server's code unwrapped.
 * `recordStatementsOf` records the same for code run in this process (a test's app.inject).
 *
 * Plain JavaScript: the server runs as `npm start` runs it, without a TypeScript loader. Nothing in src/
 * knows about it.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { appendFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'

const HEADER = 'x-bench-record-sql'
// Statements a request's own async work sends after its response (events, audit) still count as its own.
const AFTER_RESPONSE_MS = 200

const file = process.env.BENCH_SQL_RECORDING
// The server's own copy of pg: the repository's, as this file's is.
const require = createRequire(import.meta.url)
const pg = require('pg')
const { prepareValue } = require('pg/lib/utils')

const storage = new AsyncLocalStorage()
/** The request each recording belongs to, so that its body's events carry the recording on. */
const recordings = new WeakMap()
/** Per pg client: its number, and whether it is inside BEGIN … COMMIT. */
const clients = new WeakMap()
let nextClient = 1

const originalServerEmit = http.Server.prototype.emit
const originalMessageEmit = http.IncomingMessage.prototype.emit
const originalQuery = pg.Client.prototype.query

/** A value as pg sends it (text, or bytes as base64), so that a replay sends the same. */
function wireValue(value) {
  const prepared = prepareValue(value)
  return Buffer.isBuffer(prepared) ? { base64: prepared.toString('base64') } : prepared
}

function clientState(client) {
  let state = clients.get(client)
  if (!state) {
    state = { number: nextClient++, inTransaction: false }
    clients.set(client, state)
  }
  return state
}

function record(recording, client, config, values) {
  const text = typeof config === 'string' ? config : config?.text
  if (typeof text !== 'string') return undefined
  const state = clientState(client)
  const keyword = text.trim().toLowerCase()
  if (/^(begin|start transaction)\b/.test(keyword)) state.inTransaction = true
  const statement = {
    text,
    ...(typeof config === 'object' && config.name && { name: config.name }),
    ...(typeof config === 'object' && config.rowMode && { rowMode: config.rowMode }),
    values: (values ?? (typeof config === 'object' ? config.values : undefined) ?? []).map(wireValue),
    inTransaction: state.inTransaction,
    connection: state.number,
    startMs: performance.now() - recording.startedAt,
  }
  if (/^(commit|end|rollback)\s*;?$/.test(keyword)) state.inTransaction = false
  recording.statements.push(statement)
  return statement
}

// Enough rows for a replay to find the ids a later statement takes from an earlier one's answer.
const ROWS_KEPT = 100

/** An answer's first rows as arrays of values, in column order. */
function keptRows(answer) {
  const rows = answer?.rows
  if (!Array.isArray(rows)) return []
  return rows.slice(0, ROWS_KEPT).map((row) => (Array.isArray(row) ? row : Object.values(row)))
}

function query(...args) {
  const recording = storage.getStore()
  const statement =
    recording && record(recording, this, args[0], Array.isArray(args[1]) ? args[1] : undefined)
  if (!statement) return originalQuery.apply(this, args)
  const started = performance.now()
  const done = (answer) => {
    statement.ms = performance.now() - started
    statement.rows = keptRows(answer)
  }
  const last = args.length - 1
  const callback = args[last]
  if (typeof callback === 'function') {
    args[last] = function (error, answer, ...rest) {
      done(answer)
      return callback.call(this, error, answer, ...rest)
    }
    return originalQuery.apply(this, args)
  }
  const result = originalQuery.apply(this, args)
  if (typeof result?.then === 'function') result.then(done, () => done(undefined))
  return result
}

function startRecording(label, request, response) {
  const recording = {
    label,
    method: request.method,
    url: request.url,
    startedAt: performance.now(),
    statements: [],
  }
  response.once('finish', () => {
    recording.responseMs = performance.now() - recording.startedAt
    setTimeout(() => {
      const { startedAt, ...written } = recording
      appendFileSync(file, `${JSON.stringify(written)}\n`)
    }, AFTER_RESPONSE_MS).unref()
  })
  return recording
}

function serverEmit(event, request, response, ...rest) {
  const label = event === 'request' ? request.headers[HEADER] : undefined
  if (typeof label !== 'string') return originalServerEmit.call(this, event, request, response, ...rest)
  const recording = startRecording(label, request, response)
  recordings.set(request, recording)
  return storage.run(recording, () => originalServerEmit.call(this, event, request, response, ...rest))
}

// The request's body arrives in the connection's async context, not the request's: its events are replayed
// into the recording, or a POST's handler would run outside it.
function messageEmit(...args) {
  const recording = recordings.get(this)
  return recording
    ? storage.run(recording, () => originalMessageEmit.apply(this, args))
    : originalMessageEmit.apply(this, args)
}

function uninstall() {
  http.Server.prototype.emit = originalServerEmit
  http.IncomingMessage.prototype.emit = originalMessageEmit
  pg.Client.prototype.query = originalQuery
  storage.disable()
}

/**
 * The statements sent through pg while `send` runs, in its async context: for a test that exercises the app
 * in its own process (app.inject), where no HTTP request carries the header.
 */
export async function recordStatementsOf(send) {
  const recording = { startedAt: performance.now(), statements: [] }
  const installed = pg.Client.prototype.query === query
  if (!installed) pg.Client.prototype.query = query
  try {
    await storage.run(recording, send)
  } finally {
    if (!installed) pg.Client.prototype.query = originalQuery
  }
  return recording.statements
}

if (file) {
  http.Server.prototype.emit = serverEmit
  http.IncomingMessage.prototype.emit = messageEmit
  pg.Client.prototype.query = query
  process.once('SIGUSR2', uninstall)
}
