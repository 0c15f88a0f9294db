import { and, asc, count, desc, eq, inArray, isNull, ne, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { oauthApps, oauthCodes, oauthRefreshTokens, oauthScopes } from './tables.js'

export type AppRow = typeof oauthApps.$inferSelect
export type ScopeRow = typeof oauthScopes.$inferSelect
export type CodeRow = typeof oauthCodes.$inferSelect
export type RefreshTokenRow = typeof oauthRefreshTokens.$inferSelect
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

export async function insertCode(db: Database, values: typeof oauthCodes.$inferInsert): Promise<void> {
  await db.insert(oauthCodes).values(values)
}

/** Marks the code used, once: the row only for the first exchange, whatever runs concurrently. */
export async function useCode(db: Database, codeHash: string): Promise<CodeRow | undefined> {
  const [row] = await db
    .update(oauthCodes)
    .set({ usedAt: new Date() })
    .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
    .returning()
  return row
}

export async function findCode(db: Database, codeHash: string): Promise<CodeRow | undefined> {
  const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash))
  return row
}

export async function insertRefreshToken(
  db: Database,
  values: Omit<typeof oauthRefreshTokens.$inferInsert, 'id' | 'createdAt'>,
): Promise<void> {
  await db.insert(oauthRefreshTokens).values(values)
}

/** The refresh token, locked until the transaction ends, so that two refreshes with it take turns. */
export async function findRefreshTokenForUpdate(
  db: Database,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  const [row] = await db
    .select()
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, tokenHash))
    .for('update')
  return row
}

/** Replaces the token: it stays usable for the grace period from the first replacement. */
export async function markRefreshTokenReplaced(db: Database, id: string): Promise<void> {
  await db
    .update(oauthRefreshTokens)
    .set({ replacedAt: sql`coalesce(${oauthRefreshTokens.replacedAt}, now())`, lastUsed: new Date() })
    .where(eq(oauthRefreshTokens.id, id))
}

/** Revokes the grant's tokens that are still live; with `except`, all but that one. */
export async function revokeRefreshTokensOfCode(
  db: Database,
  codeId: string,
  except?: string,
): Promise<number> {
  const rows = await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(oauthRefreshTokens.codeId, codeId),
        isNull(oauthRefreshTokens.revokedAt),
        except ? ne(oauthRefreshTokens.id, except) : undefined,
      ),
    )
    .returning({ id: oauthRefreshTokens.id })
  return rows.length
}

export async function findRefreshToken(
  db: Database,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  const [row] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, tokenHash))
  return row
}
