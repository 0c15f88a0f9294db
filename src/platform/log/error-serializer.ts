import { stdSerializers } from 'pino'

/** A logged message or stack line longer than this is cut: a failed 1 MB input must not fill the log. */
export const MAX_LOGGED_TEXT = 500

/** What a database error may say in the log: where and why it failed, never the values involved. */
const DATABASE_ERROR_FIELDS = [
  'code',
  'severity',
  'constraint',
  'table',
  'column',
  'schema',
  'routine',
] as const

type DatabaseError = Error & Partial<Record<(typeof DATABASE_ERROR_FIELDS)[number], string>>

const cut = (text: string) =>
  text.length > MAX_LOGGED_TEXT ? `${text.slice(0, MAX_LOGGED_TEXT)}… (${text.length} characters)` : text

/** PostgreSQL's (and PGlite's) errors carry a five-character SQLSTATE `code` and a `severity`. */
function databaseErrorIn(error: Error): DatabaseError | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const { code, severity } = e as DatabaseError
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string')
      return e as DatabaseError
  }
  return undefined
}

/** Drizzle wraps a failed statement in an error whose message holds the SQL and its parameters in full. */
const isFailedQuery = (error: Error) =>
  'params' in error || error.message.startsWith('Failed query:') || error.name === 'DrizzleQueryError'

export interface SerializedError {
  type: string
  message: string
  stack: string
  [key: string]: unknown
}

/** The stack's frames alone: the lines before them repeat the message, which may span lines. */
const framesOf = (error: Error) =>
  error.stack
    ?.split('\n')
    .filter((line) => line.startsWith('    at '))
    .join('\n')

/**
 * The `err` serializer of every log line (requests, jobs, start-up). A database error is logged by its
 * SQL state, constraint, table and column; its message, `detail` ("Key (email)=(…) already exists"),
 * the statement's parameters and the wrapping message that holds them are left out. Any other error is
 * logged as pino logs it, with its message cut to MAX_LOGGED_TEXT characters.
 */
export function serializeError(error: Error): SerializedError {
  if (!(error instanceof Error)) return error as SerializedError
  const database = databaseErrorIn(error)
  if (database || isFailedQuery(error)) {
    const fields = Object.fromEntries(
      DATABASE_ERROR_FIELDS.flatMap((field) => (database?.[field] ? [[field, database[field]]] : [])),
    )
    return {
      type: error.name,
      message: `database error${database?.code ? ` ${database.code}` : ''}`,
      sql_state: database?.code,
      ...fields,
      stack: framesOf(error) ?? '',
    }
  }
  const message = cut(error.message)
  return {
    ...stdSerializers.err(error),
    message,
    stack: `${error.name}: ${message}\n${framesOf(error) ?? ''}`,
  }
}
