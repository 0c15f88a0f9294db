import { eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { mailSubusers } from './tables.js'

export type MailSubuserRow = typeof mailSubusers.$inferSelect

export async function upsertMailSubuser(
  db: Database,
  accountId: string,
  values: { username: string; apiKeyEncrypted: string },
): Promise<MailSubuserRow> {
  const [row] = await db
    .insert(mailSubusers)
    .values({ accountId, ...values })
    .onConflictDoUpdate({ target: mailSubusers.accountId, set: { ...values, updatedAt: new Date() } })
    .returning()
  return row as MailSubuserRow
}

export async function findMailSubuser(db: Database, accountId: string): Promise<MailSubuserRow | undefined> {
  const [row] = await db.select().from(mailSubusers).where(eq(mailSubusers.accountId, accountId))
  return row
}
