import { PgPreparedQuery } from 'drizzle-orm/pg-core'
import { endedAfter, type Tracer } from './span.js'

type QueryWithCache = (
  queryString: string,
  params: unknown[],
  query: () => Promise<unknown>,
) => Promise<unknown>

/** The statement's first keyword (SELECT, INSERT, BEGIN, ...): the span's name and db.operation.name. */
const operationOf = (text: string) => /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY'

/**
 * A client span per query Drizzle runs: every one, on PostgreSQL and PGlite alike and in transactions
 * (pg-boss's sends too, through rawExecutor), passes through its prepared query's `queryWithCache`. The span
 * holds the statement's text with its $n placeholders, never the parameters. Returns the undoing.
 */
export function traceDatabaseQueries(tracer: Tracer): () => void {
  const prototype = PgPreparedQuery.prototype as unknown as { queryWithCache: QueryWithCache }
  const original = prototype.queryWithCache
  prototype.queryWithCache = function (this: unknown, queryString, params, query) {
    const operation = operationOf(queryString)
    const span = tracer.startSpan(operation, {
      kind: 'client',
      requireParent: true,
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        'db.query.text': queryString,
      },
    })
    return endedAfter(span, () => original.call(this, queryString, params, query))
  }
  return () => {
    prototype.queryWithCache = original
  }
}
