import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { socialnetTokens } from './tables.js'

export type TokenRow = typeof socialnetTokens.$inferSelect

const live = (accountId: string, source: string) =>
  and(
    eq(socialnetTokens.accountId, accountId),
    eq(socialnetTokens.source, source),
    isNull(socialnetTokens.deleted),
  )

/**
 * Stores the account's token for `source`: the live record is given the new token (valid again), or one is
 * created. One statement, so two stores at once leave one live record.
 */
export async function upsertLiveToken(
  db: Database,
  accountId: string,
  values: Pick<TokenRow, 'source' | 'createdBy' | 'accessToken' | 'expiresIn' | 'expiresAt'>,
): Promise<TokenRow> {
  const renewed = {
    accessToken: values.accessToken,
    expiresIn: values.expiresIn,
    expiresAt: values.expiresAt,
    createdBy: values.createdBy,
    status: 'valid' as const,
    invalidReason: null,
    invalidAt: null,
    updatedAt: new Date(),
  }
  const [row] = await db
    .insert(socialnetTokens)
    .values({ ...values, accountId })
    .onConflictDoUpdate({
      target: [socialnetTokens.accountId, socialnetTokens.source],
      targetWhere: sql`${socialnetTokens.deleted} is null`,
      set: renewed,
    })
    .returning()
  return row as TokenRow
}

export async function findLiveToken(
  db: Database,
  accountId: string,
  source: string,
): Promise<TokenRow | undefined> {
  const [row] = await db.select().from(socialnetTokens).where(live(accountId, source))
  return row
}

/** Replaces the live token with the long-lived one it was exchanged for. */
export async function replaceLiveToken(
  db: Database,
  accountId: string,
  id: string,
  values: Pick<TokenRow, 'accessToken' | 'expiresIn' | 'expiresAt'>,
): Promise<void> {
  await db
    .update(socialnetTokens)
    .set({ ...values, updatedAt: new Date() })
    .where(and(eq(socialnetTokens.accountId, accountId), eq(socialnetTokens.id, id)))
}

/** Marks the live token invalid; answers whether it was valid until now (so the account is told once). */
export async function markLiveTokenInvalid(
  db: Database,
  accountId: string,
  source: string,
  reason: string,
): Promise<boolean> {
  const rows = await db
    .update(socialnetTokens)
    .set({ status: 'invalid', invalidReason: reason, invalidAt: new Date(), updatedAt: new Date() })
    .where(and(live(accountId, source), eq(socialnetTokens.status, 'valid')))
    .returning({ id: socialnetTokens.id })
  return rows.length > 0
}

/** Sets the spec's `deleted` on the live token; the record, or none when there was no live one. */
export async function softDeleteLiveToken(
  db: Database,
  accountId: string,
  source: string,
): Promise<TokenRow | undefined> {
  const [row] = await db
    .update(socialnetTokens)
    .set({ deleted: new Date(), updatedAt: new Date() })
    .where(live(accountId, source))
    .returning()
  return row
}
