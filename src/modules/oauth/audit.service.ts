import type { Database } from '../../platform/db/connection.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { paginateList } from '../../platform/http/pagination.js'
import { auditList, insertAuditEvent, listAuditEvents } from './audit.repository.js'
import type { AuditEvent, AuditEventName, AuditQuery } from './audit.schemas.js'

/** What an audit record is made from; the ids a request has, the others null. */
export interface AuditEventInput {
  event: AuditEventName
  clientId?: string | null
  userId?: string | null
  accountId?: string | null
  ip?: string | null
  detail?: Record<string, unknown>
}

/** Records an event; called in the transaction of what it records, so both commit or neither. */
export function recordAudit(db: Database, event: AuditEventInput): Promise<void> {
  return insertAuditEvent(db, {
    event: event.event,
    clientId: event.clientId ?? null,
    userId: event.userId ?? null,
    accountId: event.accountId ?? null,
    ip: event.ip ?? null,
    detail: event.detail ?? {},
  })
}

export function listAudit(
  db: Database,
  query: AuditQuery,
): Promise<{ data: AuditEvent[]; pagination: Pagination | CursorPagination }> {
  return paginateList(
    auditList,
    query,
    (window) => listAuditEvents(db, { clientId: query.client_id, accountId: query.account_id, ...window }),
    (row) => ({
      _id: row.id,
      event: row.event as AuditEventName,
      client_id: row.clientId,
      user_id: row.userId,
      account_id: row.accountId,
      ip: row.ip,
      detail: row.detail,
      created_at: row.createdAt.toISOString(),
    }),
  )
}
