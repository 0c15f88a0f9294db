import { sql } from 'drizzle-orm'
import type { DatabaseHandle } from './connection.js'
import { rowsOf } from './rows.js'

/**
 * Whether the database reclaims the space of deleted and updated rows by itself: PostgreSQL with
 * autovacuum on, its default. The embedded database runs none (PGlite is PostgreSQL in single-user mode),
 * nor does a server whose autovacuum is turned off: there whoever deletes or updates in bulk vacuums after
 * itself, or its tables grow however many rows go (docs/decisions.md, retention).
 */
export async function vacuumsItself(handle: DatabaseHandle): Promise<boolean> {
  if (handle.kind === 'pglite') return false
  const result = await handle.db.execute(sql`select current_setting('autovacuum') = 'on' as on`)
  return rowsOf<{ on: boolean }>(result)[0]?.on === true
}
