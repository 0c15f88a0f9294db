import { and, eq, getTableColumns, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { oauthAuditEvents } from './tables.js'

export type AuditEventRow = typeof oauthAuditEvents.$inferSelect

export async function insertAuditEvent(
  db: Database,
  values: Omit<typeof oauthAuditEvents.$inferInsert, 'id' | 'createdAt'>,
): Promise<void> {
  await db.insert(oauthAuditEvents).values(values)
}

/**
 * The insert of the audit record of the grant in `grants`, a CTE (one row at most, with `client_id`,
 * `user_id`, `account_id` and `scopes`) of the statement that issues its tokens: both are written or neither.
 * For a prepared statement: its values are the placeholders `auditId` (a new id) and `ip`.
 */
export function grantAuditInsert(grants: string, event: string): SQL {
  return sql`insert into ${oauthAuditEvents} (id, event, client_id, user_id, account_id, ip, detail)
    select ${sql.placeholder('auditId')}::text, ${event}::text, client_id, user_id, account_id,
      ${sql.placeholder('ip')}::text, jsonb_build_object('scopes', scopes)
    from ${sql.identifier(grants)}`
}

/** The audit trail, newest first. */
export const auditList = keysetList('oauth_audit_events', oauthAuditEvents.createdAt, oauthAuditEvents.id)

/** Newest first, optionally of one app and/or one account. Admin only: it spans accounts. */
export async function listAuditEvents(
  db: Database,
  filters: { clientId?: string; accountId?: string } & ListWindow,
) {
  const where: SQL[] = []
  if (filters.clientId) where.push(eq(oauthAuditEvents.clientId, filters.clientId))
  if (filters.accountId) where.push(eq(oauthAuditEvents.accountId, filters.accountId))
  const condition = where.length > 0 ? and(...where) : undefined
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(oauthAuditEvents), ...placeField(auditList) })
      .from(oauthAuditEvents)
      .$dynamic(),
    { ...auditList, from: oauthAuditEvents, where: condition },
    filters,
  )
}
