import { type SQL, sql } from 'drizzle-orm'
import type { PgColumn } from 'drizzle-orm/pg-core'

/**
 * The `set` of an upsert into a roll-up (`onConflictDoUpdate`): each counter adds the row's value to the
 * stored one (`requests = requests + excluded.requests`), so concurrent writers add up instead of
 * overwriting each other, and a negative value moves a count away.
 */
export function addedToStored<K extends string>(counters: Record<K, PgColumn>): Record<K, SQL> {
  const entries = Object.entries<PgColumn>(counters).map(([key, column]) => [
    key,
    sql`${column} + excluded.${sql.identifier(column.name)}`,
  ])
  return Object.fromEntries(entries) as Record<K, SQL>
}
