import type { Database } from '../../platform/db/connection.js'
import { Invalid } from '../../platform/http/errors.js'
import { findScopes, listScopes as listScopeRows } from './scopes.repository.js'
import type { Scope } from './scopes.schemas.js'

export async function listScopes(db: Database): Promise<Scope[]> {
  return (await listScopeRows(db)).map(({ scope, description, category }) => ({
    scope,
    description,
    category,
  }))
}

/** Refuses scopes the table does not hold, naming them. */
export async function assertKnownScopes(db: Database, scopes: string[]): Promise<void> {
  const known = new Set((await findScopes(db, scopes)).map((row) => row.scope))
  const unknown = scopes.filter((scope) => !known.has(scope))
  if (unknown.length > 0) throw new Invalid(`scopes has unknown scopes: ${unknown.join(', ')}`, { unknown })
}
