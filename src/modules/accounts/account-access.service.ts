import { type AnyColumn, type SQL, sql } from 'drizzle-orm'
import { accounts, memberships } from './tables.js'

// Conditions for the statements of other modules that act for a user in an account (an OAuth grant), as
// `exists (…)` clauses: a hot path stays one statement and still sees the account as it is now.

/** The account is active (not suspended). */
export const accountIsActive = (accountId: AnyColumn | SQL): SQL =>
  sql`exists (select 1 from ${accounts} where ${accounts.id} = ${accountId} and ${accounts.status} = 'active')`

/** The user is still a member of the account. */
export const isMemberOfAccount = (accountId: AnyColumn | SQL, userId: AnyColumn | SQL): SQL =>
  sql`exists (select 1 from ${memberships}
    where ${memberships.accountId} = ${accountId} and ${memberships.userId} = ${userId})`
