import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

const dialect = new PgDialect()

/**
 * A hot raw statement, written once with `sql.placeholder(...)` for its values: Drizzle builds its text
 * once, and PostgreSQL parses and plans it once per connection (a named prepared statement) instead of on
 * every call, a good part of what a small statement costs either. The name must be unique in the service.
 * Runs on a Drizzle database or transaction; answers the rows as PostgreSQL names them (timestamps as
 * text). PGlite ignores the name.
 */
export function preparedStatement<Row>(name: string, statement: SQL) {
  const query = dialect.sqlToQuery(statement)
  return async (db: Database, values: Record<string, unknown>): Promise<Row[]> => {
    const result = await db._.session.prepareQuery(query, undefined, name, false).execute(values)
    return (result as { rows: Row[] }).rows
  }
}

/**
 * A Drizzle query built once per database or transaction, e.g. `db.select()…prepare(name)` with
 * placeholders: the hot queries of a request then skip the query builder. A transaction is a new executor
 * each time, so inside one the query is built again on every call: there, use `preparedStatement`.
 */
export function preparedOnce<T>(build: (db: Database) => T): (db: Database) => T {
  const built = new WeakMap<Database, T>()
  return (db) => {
    let query = built.get(db)
    if (!query) {
      query = build(db)
      built.set(db, query)
    }
    return query
  }
}
