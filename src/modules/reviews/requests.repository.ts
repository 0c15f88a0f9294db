import { and, eq, getTableColumns, gte, inArray, lte, ne, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { ReviewPlatform } from './documents.schemas.js'
import { countRequestChanges } from './stats.repository.js'
import { type REQUEST_STATUSES, reviewRefunds, reviewRequests, reviewSmsMessages } from './tables.js'

export type RequestRow = typeof reviewRequests.$inferSelect
export type RequestStatus = (typeof REQUEST_STATUSES)[number]
export type NewRequest = Omit<typeof reviewRequests.$inferInsert, 'accountId'>
/** What names a request in its jobs: its account and its id. */
export type RequestKey = Pick<RequestRow, 'accountId' | 'id'>
export type RequestChanges = Partial<
  Pick<RequestRow, 'status' | 'reason' | 'sentAt' | 'clickedAt' | 'scheduledFor' | 'followUpSentAt'>
>

/** Statuses that hold a customer's place in the 30-day limit. */
const COUNTED = ['scheduled', 'sent', 'clicked'] as const

/** A customer on a platform, within an agency: the 30-day limit is counted per key, across its accounts. */
interface LimitKey {
  customerKey: string
  platform?: ReviewPlatform
}

/**
 * Serialises scheduling for one customer and platform across an agency's accounts until the transaction
 * ends (a transaction-scoped advisory lock on the key), so two events at once cannot both schedule. Scoped
 * by the agency (`parent_account`), not one account: the spec's limit spans its accounts.
 */
export async function lockCustomerPlatform(
  tx: Database,
  parentAccount: string,
  key: Required<LimitKey>,
): Promise<void> {
  const name = `review-limit\n${parentAccount}\n${key.customerKey}\n${key.platform}`
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`)
}

/**
 * Whether the customer holds a request of the agency's accounts (on `platform`, or on any) created since
 * `since`, besides `exceptId`. Scoped by the agency (`parent_account`), as the spec's limit is.
 */
export async function hasCountedRequest(
  db: Database,
  parentAccount: string,
  key: LimitKey & { exceptId?: string },
  since: Date,
): Promise<boolean> {
  const filters: SQL[] = [
    eq(reviewRequests.parentAccount, parentAccount),
    eq(reviewRequests.customerKey, key.customerKey),
    gte(reviewRequests.createdAt, since),
    inArray(reviewRequests.status, [...COUNTED]),
  ]
  if (key.platform) filters.push(eq(reviewRequests.platform, key.platform))
  if (key.exceptId) filters.push(ne(reviewRequests.id, key.exceptId))
  const [row] = await db
    .select({ id: reviewRequests.id })
    .from(reviewRequests)
    .where(and(...filters))
    .limit(1)
  return row !== undefined
}

/**
 * The new request, or none when its payment or order was already scheduled for the platform; counted in
 * the daily statistics in the same transaction.
 */
export function insertRequest(
  db: Database,
  accountId: string,
  values: NewRequest,
): Promise<RequestRow | undefined> {
  return inTransaction(db, async (tx) => {
    const [row] = await tx
      .insert(reviewRequests)
      .values({ ...values, accountId })
      .onConflictDoNothing()
      .returning()
    if (row) await countRequestChanges(tx, accountId, [{ after: row }])
    return row
  })
}

const ofAccount = (accountId: string, id: string) =>
  and(eq(reviewRequests.accountId, accountId), eq(reviewRequests.id, id))

export async function findRequest(
  db: Database,
  accountId: string,
  id: string,
): Promise<RequestRow | undefined> {
  const [row] = await db.select().from(reviewRequests).where(ofAccount(accountId, id))
  return row
}

/** By its tracked link's code, from anyone who has the link: no account is known before it is found. */
export async function findRequestByPublicCode(db: Database, code: string): Promise<RequestRow | undefined> {
  const [row] = await db.select().from(reviewRequests).where(eq(reviewRequests.code, code))
  return row
}

/**
 * Changes the account's requests that `which` selects, and their daily statistics with them, in one
 * transaction: the rows are locked as they were read, so the counts move from exactly what they were.
 */
function changeRequests(
  db: Database,
  accountId: string,
  which: SQL | undefined,
  changes: RequestChanges,
): Promise<RequestRow[]> {
  return inTransaction(db, async (tx) => {
    const before = await tx
      .select()
      .from(reviewRequests)
      .where(and(eq(reviewRequests.accountId, accountId), which))
      .orderBy(reviewRequests.id)
      .for('update')
    if (before.length === 0) return []
    const after = await tx
      .update(reviewRequests)
      .set(changes)
      .where(
        and(
          eq(reviewRequests.accountId, accountId),
          inArray(
            reviewRequests.id,
            before.map((row) => row.id),
          ),
        ),
      )
      .returning()
    const previous = new Map(before.map((row) => [row.id, row]))
    await countRequestChanges(
      tx,
      accountId,
      after.map((row) => ({ before: previous.get(row.id), after: row })),
    )
    return after
  })
}

/** Moves a request on from `from` only: a change another run made first is never overwritten. */
export async function moveRequest(
  db: Database,
  accountId: string,
  id: string,
  from: RequestStatus,
  changes: RequestChanges,
): Promise<RequestRow | undefined> {
  const [row] = await changeRequests(
    db,
    accountId,
    and(eq(reviewRequests.id, id), eq(reviewRequests.status, from)),
    changes,
  )
  return row
}

/** Cancels the account's scheduled requests of the payments or orders named. */
export async function cancelScheduledOfSources(
  db: Database,
  accountId: string,
  sourceRefs: string[],
  reason: string,
): Promise<number> {
  const which = and(inArray(reviewRequests.sourceRef, sourceRefs), eq(reviewRequests.status, 'scheduled'))
  return (await changeRequests(db, accountId, which, { status: 'cancelled', reason })).length
}

/** Keeps that the account's payments or orders named were refunded (once each). */
export async function recordRefunds(db: Database, accountId: string, sourceRefs: string[]): Promise<void> {
  if (sourceRefs.length === 0) return
  await db
    .insert(reviewRefunds)
    .values(sourceRefs.map((sourceRef) => ({ accountId, sourceRef })))
    .onConflictDoNothing()
}

/** Whether the account's payment or order `sourceRef` was refunded. */
export async function wasRefunded(db: Database, accountId: string, sourceRef: string): Promise<boolean> {
  const [row] = await db
    .select({ id: reviewRefunds.id })
    .from(reviewRefunds)
    .where(and(eq(reviewRefunds.accountId, accountId), eq(reviewRefunds.sourceRef, sourceRef)))
    .limit(1)
  return row !== undefined
}

export interface RequestFilters {
  status?: RequestStatus
  platform?: ReviewPlatform
  customer?: string
  from?: Date
  to?: Date
}

/** An account's review requests, newest first. */
export const requestsList = keysetList('review_requests', reviewRequests.createdAt, reviewRequests.id)

export function listRequests(db: Database, accountId: string, filters: RequestFilters, page: ListWindow) {
  const conditions: SQL[] = [eq(reviewRequests.accountId, accountId)]
  if (filters.status) conditions.push(eq(reviewRequests.status, filters.status))
  if (filters.platform) conditions.push(eq(reviewRequests.platform, filters.platform))
  if (filters.customer) conditions.push(eq(reviewRequests.customerKey, filters.customer))
  if (filters.from) conditions.push(gte(reviewRequests.createdAt, filters.from))
  if (filters.to) conditions.push(lte(reviewRequests.createdAt, filters.to))
  const where = and(...conditions)
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(reviewRequests), ...placeField(requestsList) })
      .from(reviewRequests)
      .$dynamic(),
    { ...requestsList, from: reviewRequests, where },
    page,
  )
}

export async function insertSmsMessage(
  db: Database,
  accountId: string,
  values: Omit<typeof reviewSmsMessages.$inferInsert, 'accountId'>,
) {
  await db.insert(reviewSmsMessages).values({ ...values, accountId })
}

/** The first click on a sent request's link: it becomes `clicked`, the time kept; later clicks change nothing. */
export async function recordFirstClick(
  db: Database,
  accountId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  return (await moveRequest(db, accountId, id, 'sent', { status: 'clicked', clickedAt: at })) !== undefined
}

/** The requests one event of the account scheduled, one per platform. */
export function listRequestsOfEvent(db: Database, accountId: string, eventId: string): Promise<RequestRow[]> {
  return db
    .select()
    .from(reviewRequests)
    .where(and(eq(reviewRequests.accountId, accountId), eq(reviewRequests.eventId, eventId)))
    .orderBy(reviewRequests.platform)
}
