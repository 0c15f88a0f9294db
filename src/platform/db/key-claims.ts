import { getTableName, type SQL, sql } from 'drizzle-orm'
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'
import { rowsOf } from './rows.js'

/**
 * A module's table of claims on keys: one row per key of an account, written before an outside call that
 * must happen once (a send), and marked recorded in the transaction that records the call's outcome.
 */
export interface KeyClaimColumns {
  accountId: AnyPgColumn
  key: AnyPgColumn
  /** The id the effect is recorded under, chosen with the claim: a later attempt asks the provider for it. */
  attemptId: AnyPgColumn
  claimedAt: AnyPgColumn
  /** Null while the call is under way (or its process died during it). */
  recordedAt: AnyPgColumn
}

export interface KeyClaim {
  attemptId: string | null
  claimedAt: Date
  recorded: boolean
}

export interface KeyClaims {
  /** Claims the key for this attempt; false when a claim holds it already. */
  claim(db: Database, accountId: string, key: string, attemptId: string): Promise<boolean>
  find(db: Database, accountId: string, key: string): Promise<KeyClaim | undefined>
  /**
   * Takes over a claim that recorded nothing and was made at `claimedAt` (its process died): false when
   * another attempt took it over first.
   */
  takeOver(db: Database, accountId: string, key: string, claimedAt: Date): Promise<boolean>
  /** Marks the claim recorded, in the transaction that records the outcome. */
  record(tx: Database, accountId: string, key: string): Promise<void>
  /** Gives an unrecorded claim up after the provider refused the call, so that a retry may call again. */
  release(db: Database, accountId: string, key: string): Promise<void>
}

/** To the millisecond, as a Date holds it: `takeOver` names the claim it read by its time. */
const claimTime = sql`date_trunc('milliseconds', now())`

/** The claims kept in `table`, whose columns are `columns`. */
export function keyClaimsIn(table: PgTable, columns: KeyClaimColumns): KeyClaims {
  const name = sql.identifier(getTableName(table))
  const column = (key: keyof KeyClaimColumns) => sql.identifier(columns[key].name)
  const sameKey = (accountId: string, key: string): SQL =>
    sql`${column('accountId')} = ${accountId} and ${column('key')} = ${key}`
  const unrecorded = sql`${column('recordedAt')} is null`
  return {
    async claim(db, accountId, key, attemptId) {
      const result = await db.execute(sql`
        insert into ${name} (${column('accountId')}, ${column('key')}, ${column('attemptId')}, ${column('claimedAt')})
        values (${accountId}, ${key}, ${attemptId}, ${claimTime})
        on conflict do nothing returning 1 as claimed`)
      return rowsOf(result).length === 1
    },
    async find(db, accountId, key) {
      const result = await db.execute(sql`
        select ${column('attemptId')} as attempt_id, ${column('claimedAt')} as claimed_at,
          ${column('recordedAt')} is not null as recorded
        from ${name} where ${sameKey(accountId, key)}`)
      const [row] = rowsOf<{ attempt_id: string | null; claimed_at: Date | string; recorded: boolean }>(
        result,
      )
      return row && { attemptId: row.attempt_id, claimedAt: new Date(row.claimed_at), recorded: row.recorded }
    },
    async takeOver(db, accountId, key, claimedAt) {
      const result = await db.execute(sql`
        update ${name} set ${column('claimedAt')} = ${claimTime}
        where ${sameKey(accountId, key)} and ${unrecorded}
          and date_trunc('milliseconds', ${column('claimedAt')}) = ${claimedAt.toISOString()}
        returning 1 as taken`)
      return rowsOf(result).length === 1
    },
    async record(tx, accountId, key) {
      await tx.execute(
        sql`update ${name} set ${column('recordedAt')} = now() where ${sameKey(accountId, key)}`,
      )
    },
    async release(db, accountId, key) {
      await db.execute(sql`delete from ${name} where ${sameKey(accountId, key)} and ${unrecorded}`)
    },
  }
}
