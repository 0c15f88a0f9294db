import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import {
  findRequest,
  listRequests,
  moveRequest,
  type RequestFilters,
  type RequestRow,
  requestsList,
} from './requests.repository.js'
import type { ListQuery, ReviewRequest } from './requests.schemas.js'
import { customerKeyOf } from './scheduling.service.js'

export const REQUEST_NOT_FOUND = 'Review request not found'

export const requestView = (row: RequestRow): ReviewRequest => ({
  _id: row.id,
  account_id: row.accountId,
  event_id: row.eventId,
  source_ref: row.sourceRef,
  customer: { name: row.customerName, email: row.customerEmail, phone: row.customerPhone },
  platform: row.platform,
  send_method: row.sendMethod,
  status: row.status,
  reason: row.reason,
  order_value: row.orderValue,
  currency: row.currency,
  scheduled_for: row.scheduledFor.toISOString(),
  sent_at: row.sentAt?.toISOString() ?? null,
  clicked_at: row.clickedAt?.toISOString() ?? null,
  follow_up_sent_at: row.followUpSentAt?.toISOString() ?? null,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** A `customer` filter: an email when it has an @, else a phone. */
const asContact = (value: string) => (value.includes('@') ? { email: value } : { phone: value })

export function listAccountRequests(
  db: Database,
  accountId: string,
  query: ListQuery,
): Promise<{ data: ReviewRequest[]; pagination: Pagination | CursorPagination }> {
  const filters: RequestFilters = {
    status: query.status,
    platform: query.platform,
    customer: query.customer ? (customerKeyOf(asContact(query.customer)) ?? undefined) : undefined,
    from: query.from ? new Date(query.from) : undefined,
    to: query.to ? new Date(query.to) : undefined,
  }
  return paginateList(
    requestsList,
    query,
    (window) => listRequests(db, accountId, filters, window),
    requestView,
  )
}

/** `POST /reviews/requests/:id/cancel`: a scheduled request only (409 otherwise; another account's: 404). */
export async function cancelRequest(
  db: Database,
  accountId: string,
  requestId: string,
): Promise<ReviewRequest> {
  const row = isId(requestId) ? await findRequest(db, accountId, requestId) : undefined
  if (!row) throw new NotFound(REQUEST_NOT_FOUND)
  const cancelled = await moveRequest(db, accountId, row.id, 'scheduled', {
    status: 'cancelled',
    reason: 'cancelled_by_user',
  })
  if (!cancelled)
    throw new Conflict(`Only a scheduled review request can be cancelled; this one is ${row.status}`)
  return requestView(cancelled)
}
