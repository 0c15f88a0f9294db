import { eq } from 'drizzle-orm'
import { accounts } from '../../src/modules/accounts/tables.js'
import type { TestApp } from './app.js'

/**
 * The account as its DELETE leaves it until the removal job reaches its tables (minutes for a large
 * account): status `removed`, every row in place. For files whose jobs run, where the job would soon
 * delete the rows a test of that window reads.
 */
export async function removedInPlace(t: TestApp, accountId: string): Promise<void> {
  await t.app.platform.db.update(accounts).set({ status: 'removed' }).where(eq(accounts.id, accountId))
}
