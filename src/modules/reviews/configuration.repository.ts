import { asc, desc, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import type { ListQuery } from './configuration.schemas.js'
import { reviewConfigurations } from './tables.js'

export type ConfigurationRow = typeof reviewConfigurations.$inferSelect
export type ConfigurationValues = Omit<ConfigurationRow, 'id' | 'accountId' | 'createdAt' | 'updatedAt'>

export async function findConfiguration(
  db: Database,
  accountId: string,
): Promise<ConfigurationRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewConfigurations)
    .where(eq(reviewConfigurations.accountId, accountId))
  return row
}

/** Creates the account's configuration or replaces the one it has (one per account). */
export async function upsertConfiguration(
  db: Database,
  accountId: string,
  values: ConfigurationValues,
): Promise<ConfigurationRow> {
  const [row] = await db
    .insert(reviewConfigurations)
    .values({ ...values, accountId })
    .onConflictDoUpdate({
      target: reviewConfigurations.accountId,
      set: { ...values, updatedAt: new Date() },
    })
    .returning()
  return row as ConfigurationRow
}

const SORT_COLUMNS = {
  created_at: reviewConfigurations.createdAt,
  updated_at: reviewConfigurations.updatedAt,
  name: reviewConfigurations.name,
} as const

export function listConfigurations(
  db: Database,
  accountId: string,
  page: Pick<ListQuery, 'sort_by' | 'order'> & { offset: number; limit: number },
) {
  const direction = page.order === 'asc' ? asc : desc
  const where = eq(reviewConfigurations.accountId, accountId)
  return selectPage(
    db,
    db
      .select()
      .from(reviewConfigurations)
      .where(where)
      .orderBy(direction(SORT_COLUMNS[page.sort_by]), direction(reviewConfigurations.id))
      .$dynamic(),
    { from: reviewConfigurations, where },
    page,
  )
}
