import { asc, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { oauthScopes } from './tables.js'

export type ScopeRow = typeof oauthScopes.$inferSelect

export function listScopes(db: Database): Promise<ScopeRow[]> {
  return db.select().from(oauthScopes).orderBy(asc(oauthScopes.category), asc(oauthScopes.scope))
}

export function findScopes(db: Database, scopes: string[]): Promise<ScopeRow[]> {
  if (scopes.length === 0) return Promise.resolve([])
  return db.select().from(oauthScopes).where(inArray(oauthScopes.scope, scopes))
}
