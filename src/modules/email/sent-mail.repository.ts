import { and, eq, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { communications } from './tables.js'

/** What a line of the outbox list needs: the provider request's small fields, never its content. */
const sentMailLine = {
  id: communications.id,
  accountId: communications.accountId,
  module: communications.module,
  createdAt: communications.createdAt,
  subject: sql<string | null>`coalesce(${communications.subject}, ${communications.body} ->> 'subject')`,
  fromAddress: communications.fromAddress,
  toAddresses: communications.toAddresses,
  from: sql<unknown>`${communications.body} -> 'from'`,
  personalizations: sql<unknown>`${communications.body} -> 'personalizations'`,
  attachmentCount: sql<number>`jsonb_array_length(${communications.attachments})`.mapWith(Number),
}

export interface SentMailLineRow {
  id: string
  accountId: string
  module: string
  createdAt: Date
  subject: string | null
  /** The record's own addresses, when its sender set them; else the provider request's. */
  fromAddress: string | null
  toAddresses: string[] | null
  /** jsonb the database does not check: the provider request's `from` and `personalizations`. */
  from: unknown
  personalizations: unknown
  attachmentCount: number
}

/** The mail sent by every account, newest first: across accounts, served by a partial index of outgoing mail. */
export const sentMailList = keysetList('outbox_mail', communications.createdAt, communications.id)

/**
 * The mail sent by every account, or by one, newest first. Not scoped to an account: only the operator's
 * outbox page reads across accounts (on a database distributed by account it fans out to every shard).
 */
export function listSentMailLines(db: Database, page: { accountId?: string } & ListWindow) {
  const where = and(
    eq(communications.type, 'OUTGOING'),
    page.accountId ? eq(communications.accountId, page.accountId) : undefined,
  )
  return selectListPage(
    db,
    db
      .select({ ...sentMailLine, ...placeField(sentMailList) })
      .from(communications)
      .$dynamic(),
    { ...sentMailList, from: communications, where },
    page,
  )
}
