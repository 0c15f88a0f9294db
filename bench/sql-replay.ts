import { randomBytes, randomUUID } from 'node:crypto'
import type pg from 'pg'
import { newId } from '../src/platform/db/ids.js'
import type { RecordedRequest, RecordedStatement, WireValue } from './sql-recording.js'

/**
 * The physical limit of a database-bound route: the statements the server sent for it (recorded by
 * sql-recorder.mjs), replayed through pg on as many connections as the server could use, with no HTTP,
 * framework or application code around them.
 *
 * Two requests of one kind are recorded; a value that differs between them is per request. Each replay
 * gives it a value of its own, so that no write collides with another and each hits its own rows as the
 * route's do: the replay's own inputs where it is one of the request's inputs (the scenario lists them, as
 * they reach SQL); the replay's own answer where an earlier statement answered it (an id read, then
 * written); else a fresh one of the same form (an id the server generated, a new token's hash). Values both
 * requests share (the account, the funnel) stay. Each request's transactions are replayed as the server
 * sent them, BEGIN and COMMIT included, on one connection; its other statements each take a connection
 * from the pool, as the server's do.
 */

/** One kind of request: two of them recorded, and their inputs as they reach SQL, in a fixed order. */
export interface ReplayKind {
  recorded: [RecordedRequest, RecordedRequest]
  inputs: [string[], string[]]
}

/** One replay to run: its kind and its own inputs (in the kind's order). */
export interface ReplayRequest {
  kind: string
  inputs: string[]
}

type Value = string | null | Buffer

/** A recorded statement as the replays send it: which values are per request, which answers feed later ones. */
interface TemplateStatement {
  query: { text: string; name?: string; rowMode?: 'array' }
  values: Value[]
  /** Per value: it differs between the two recorded requests. */
  differs: boolean[]
  inTransaction: boolean
  /** Positions [row, column] of the answer whose values later statements use, with the recorded value. */
  feeds: { row: number; column: number; recorded: string }[]
  /** Positions of the values an earlier statement's answer gives (the replay's own answer, at run time). */
  fedAt: number[]
  /** A write whose recorded answer had rows: a replay that gets none did less than the route (a collision). */
  answersRows: boolean
}

/** One replay: the kind's statements and their values for it, but those earlier answers give. */
export interface PlannedReplay {
  statements: TemplateStatement[]
  values: Value[][]
  /** What the replay gives each recorded value it replaces (its inputs, its fresh ids and hashes). */
  substituted: Map<string, string>
}

/** The statements of one recorded request that the route waited for (sent before its response). */
export const routeStatements = (recorded: RecordedRequest) =>
  recorded.statements.filter((s) => s.startMs < recorded.responseMs)

// A statement that writes (alone or in a CTE); a read may well find nothing for another request's inputs.
const WRITE = /\b(insert\s+into|update\s+\S+\s+(as\s+\S+\s+)?set|delete\s+from)\b/i
const ID = /^[0-9a-f]{24}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const HEX = /^[0-9a-f]+$/
// A time ("now" when each request ran) or a number: the replay keeps the first request's.
const KEPT = /^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d|-?\d+(\.\d+)?$)/

/** A fresh value of the same form: an id, a uuid, else the same length and kinds of characters. */
function freshLike(value: string): string {
  if (ID.test(value)) return newId()
  if (UUID.test(value)) return randomUUID()
  if (HEX.test(value))
    return randomBytes(Math.ceil(value.length / 2))
      .toString('hex')
      .slice(0, value.length)
  const random = randomBytes(value.length)
  return value.replace(/[0-9]|[a-z]|[A-Z]/g, (char, i: number) => {
    const r = random[i] ?? 0
    if (char <= '9') return String(r % 10)
    const base = char <= 'Z' ? 65 : 97
    return String.fromCharCode(base + (r % 26))
  })
}

/** JSON text (a jsonb parameter): its leaves are substituted one by one. */
function parseJson(value: string): unknown {
  if (!/^[[{]/.test(value)) return undefined
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

function mapLeaves(value: unknown, map: (leaf: string) => string): unknown {
  if (typeof value === 'string') return map(value)
  if (Array.isArray(value)) return value.map((item) => mapLeaves(item, map))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapLeaves(item, map)]))
  }
  return value
}

/** A PostgreSQL array literal's elements (`{a,b}`, as pg sends a JavaScript array), substituted one by one. */
function mapArrayLiteral(value: string, map: (leaf: string) => string): string | undefined {
  if (!/^\{.*\}$/s.test(value) || value.includes('"')) return undefined
  return `{${value.slice(1, -1).split(',').map(map).join(',')}}`
}

const wire = (value: WireValue): Value =>
  value !== null && typeof value === 'object' ? Buffer.from(value.base64, 'base64') : value

const cell = (rows: unknown[][] | undefined, row: number, column: number) => {
  const value = rows?.[row]?.[column]
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** A kind's statements, with the per-request values and the answers that feed later statements marked. */
function template(name: string, kind: ReplayKind): TemplateStatement[] {
  const [first, second] = kind.recorded.map(routeStatements) as [RecordedStatement[], RecordedStatement[]]
  if (first.map((s) => s.text).join('\n;\n') !== second.map((s) => s.text).join('\n;\n')) {
    throw new Error(`the two recorded "${name}" requests sent different statements`)
  }
  const differs = first.map((s, i) =>
    s.values.map((v, j) => JSON.stringify(v) !== JSON.stringify(second[i]?.values[j])),
  )
  // Values that differ per request and come from an earlier statement's answer: the replay takes its own.
  const used = new Set(
    first.flatMap((s, i) =>
      s.values.filter((v, j): v is string => typeof v === 'string' && !!differs[i]?.[j]),
    ),
  )
  const fed = new Set<string>()
  return first.map((s, i) => {
    const statement = {
      query: { text: s.text, ...(s.name && { name: s.name }), ...(s.rowMode && { rowMode: s.rowMode }) },
      values: s.values.map(wire),
      differs: differs[i] ?? [],
      inTransaction: s.inTransaction,
      fedAt: s.values.flatMap((v, j) => (typeof v === 'string' && fed.has(v) ? [j] : [])),
      answersRows: WRITE.test(s.text) && (s.rows?.length ?? 0) > 0,
      feeds: (s.rows ?? []).flatMap((row, r) =>
        row.flatMap((_, c) => {
          const recorded = cell(s.rows, r, c)
          const other = cell(second[i]?.rows, r, c)
          return recorded !== undefined && recorded !== other && used.has(recorded)
            ? [{ row: r, column: c, recorded }]
            : []
        }),
      ),
    }
    for (const { recorded } of statement.feeds) fed.add(recorded)
    return statement
  })
}

/** The replays, built before the clock starts: each one's kind and its own inputs. */
export function planReplays(kinds: Record<string, ReplayKind>, requests: ReplayRequest[]): PlannedReplay[] {
  const templates = new Map(
    Object.entries(kinds).map(([name, kind]) => [name, { kind, statements: template(name, kind) }]),
  )
  return requests.map((request) => {
    const found = templates.get(request.kind)
    if (!found) throw new Error(`no recorded request of kind "${request.kind}"`)
    const inputs = new Map<string, string>()
    found.kind.inputs[0].forEach((recorded, i) => {
      const replayed = request.inputs[i]
      if (replayed === undefined) throw new Error(`a "${request.kind}" replay lacks input ${i}`)
      inputs.set(recorded, replayed)
    })
    const values = found.statements.map((s) => valuesFor(s, inputs))
    return { statements: found.statements, values, substituted: inputs }
  })
}

/**
 * A statement's values for one replay: the replay's where known, fresh ones for the per-request rest (kept
 * in `own`, so that an id stays the same in every statement of the replay).
 */
function valuesFor(statement: TemplateStatement, own: Map<string, string>): Value[] {
  const leaf = (value: string) => own.get(value) ?? value
  return statement.values.map((value, j) => {
    if (typeof value !== 'string') return value
    const known = own.get(value)
    if (known !== undefined) return known
    const json = parseJson(value)
    if (json !== undefined) return JSON.stringify(mapLeaves(json, leaf))
    const array = mapArrayLiteral(value, leaf)
    if (array !== undefined) return array
    if (!statement.differs[j] || KEPT.test(value)) return value
    const fresh = freshLike(value)
    own.set(value, fresh)
    return fresh
  })
}

export interface Replayed {
  requests: number
  /** From the first replay started to the last finished. */
  seconds: number
  latencies: number[]
  errors: number
  firstError?: string
}

/** One replay: its statements in order, a transaction's on one connection, the others each on any. */
async function runReplay(pool: pg.Pool, planned: PlannedReplay): Promise<void> {
  const answered = new Map<string, string>()
  let client: pg.PoolClient | undefined
  try {
    for (const [i, statement] of planned.statements.entries()) {
      if (statement.inTransaction) client ??= await pool.connect()
      let values = planned.values[i] as Value[]
      if (statement.fedAt.length > 0) {
        values = [...values]
        for (const j of statement.fedAt)
          values[j] = answered.get(statement.values[j] as string) ?? values[j] ?? null
      }
      const query = { ...statement.query, values }
      const answer = client ? await client.query(query) : await pool.query(query)
      if (client && /^\s*(commit|end|rollback)\s*;?\s*$/i.test(statement.query.text)) {
        client.release()
        client = undefined
      }
      if (statement.answersRows && answer.rows.length === 0) {
        throw new Error(
          `"${statement.query.name ?? statement.query.text.slice(0, 60)}" found no row where the recorded request's did ` +
            `(values ${JSON.stringify(values).slice(0, 300)})`,
        )
      }
      const rows = answer.rows.map((row: unknown) =>
        Array.isArray(row) ? row : Object.values(row as object),
      )
      for (const { row, column, recorded } of statement.feeds) {
        const replayed = cell(rows, row, column)
        if (replayed !== undefined) answered.set(recorded, replayed)
      }
    }
  } catch (error) {
    if (client) {
      await client.query('rollback').catch(() => undefined)
      client.release()
    }
    throw error
  }
}

/** Runs `replays` on `workers` concurrent loops sharing `pool`, each replay once. */
export async function replay(pool: pg.Pool, replays: PlannedReplay[], workers: number): Promise<Replayed> {
  const result: Replayed = { requests: replays.length, seconds: 0, latencies: [], errors: 0 }
  let next = 0
  const started = performance.now()
  const worker = async () => {
    for (let i = next++; i < replays.length; i = next++) {
      const sentAt = performance.now()
      try {
        await runReplay(pool, replays[i] as PlannedReplay)
        result.latencies.push(performance.now() - sentAt)
      } catch (error) {
        result.errors++
        result.firstError ??= error instanceof Error ? error.message : String(error)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(workers, replays.length) }, worker))
  result.seconds = (performance.now() - started) / 1000
  return result
}
