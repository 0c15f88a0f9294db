import { asc, count, desc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { oauthApps, oauthScopes } from './tables.js'

export type AppRow = typeof oauthApps.$inferSelect
export type ScopeRow = typeof oauthScopes.$inferSelect
type AppValues = Omit<typeof oauthApps.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>

export function listScopes(db: Database): Promise<ScopeRow[]> {
  return db.select().from(oauthScopes).orderBy(asc(oauthScopes.category), asc(oauthScopes.scope))
}

export function findScopes(db: Database, scopes: string[]): Promise<ScopeRow[]> {
  if (scopes.length === 0) return Promise.resolve([])
  return db.select().from(oauthScopes).where(inArray(oauthScopes.scope, scopes))
}

export async function insertApp(db: Database, values: AppValues): Promise<AppRow> {
  const [row] = await db.insert(oauthApps).values(values).returning()
  if (!row) throw new Error('app insert returned no row')
  return row
}

export async function findApp(db: Database, id: string): Promise<AppRow | undefined> {
  const [row] = await db.select().from(oauthApps).where(eq(oauthApps.id, id))
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
