import { count, desc, eq, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedOnce } from '../../platform/db/prepared.js'
import { oauthApps } from './tables.js'

export type AppRow = typeof oauthApps.$inferSelect
type AppValues = Omit<typeof oauthApps.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>

export async function insertApp(db: Database, values: AppValues): Promise<AppRow> {
  const [row] = await db.insert(oauthApps).values(values).returning()
  if (!row) throw new Error('app insert returned no row')
  return row
}

// Prepared: every token request authenticates its client with it.
const findAppQuery = preparedOnce((db) =>
  db
    .select()
    .from(oauthApps)
    .where(eq(oauthApps.id, sql.placeholder('id')))
    .prepare('oauth_find_app'),
)

export async function findApp(db: Database, id: string): Promise<AppRow | undefined> {
  const [row] = await findAppQuery(db).execute({ id })
  return row
}

export async function updateApp(
  db: Database,
  id: string,
  changes: Partial<AppValues>,
): Promise<AppRow | undefined> {
  const [row] = await db
    .update(oauthApps)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(oauthApps.id, id))
    .returning()
  return row
}

/** Newest first. */
export async function listApps(
  db: Database,
  window: { offset: number; limit: number },
): Promise<{ rows: AppRow[]; total: number }> {
  const rows = await db
    .select()
    .from(oauthApps)
    .orderBy(desc(oauthApps.createdAt), desc(oauthApps.id))
    .offset(window.offset)
    .limit(window.limit)
  const [counted] = await db.select({ total: count() }).from(oauthApps)
  return { rows, total: counted?.total ?? 0 }
}
