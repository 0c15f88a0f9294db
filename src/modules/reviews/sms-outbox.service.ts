import type { Database } from '../../platform/db/connection.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import { findSentSmsRow, listSentSmsRows, type SentSmsRow, sentSmsList } from './sms-outbox.repository.js'
import type { SMS_PROVIDERS } from './tables.js'

/** A review SMS as the operator's outbox page shows it (the email module renders it). */
export interface SentSms {
  _id: string
  account_id: string
  /** The review request it was sent for. */
  request_id: string
  to: string
  from: string | null
  body: string
  /** `outbox`: kept here only; `twilio`: accepted by Twilio, whose message SID is `provider_id`. */
  provider: (typeof SMS_PROVIDERS)[number]
  provider_id: string | null
  created_at: Date
}

const sentSmsView = (row: SentSmsRow): SentSms => ({
  _id: row.id,
  account_id: row.accountId,
  request_id: row.requestId,
  to: row.to,
  from: row.from,
  body: row.body,
  provider: row.provider,
  provider_id: row.providerId,
  created_at: row.createdAt,
})

/** The review SMS sent for every account (or `accountId`'s), newest first; by page, or after a cursor. */
export function listSentSms(
  db: Database,
  query: { accountId?: string; page: number; limit: number; cursor?: string },
): Promise<{ data: SentSms[]; pagination: Pagination | CursorPagination; nextCursor: string | null }> {
  return paginateList(
    sentSmsList,
    query,
    (window) => listSentSmsRows(db, { accountId: query.accountId, ...window }),
    sentSmsView,
  )
}

export async function getSentSms(db: Database, accountId: string, id: string): Promise<SentSms> {
  const row = await findSentSmsRow(db, accountId, id)
  if (!row) throw new NotFound('SMS not found')
  return sentSmsView(row)
}
