import type { Database } from '../../platform/db/connection.js'
import { leadWebhookRegistrations } from './tables.js'

export type RegistrationRow = typeof leadWebhookRegistrations.$inferSelect

/**
 * Stores the campaign's registration: one per account and campaign, so registering again (a retry, a new
 * page token, another user) updates the one there and keeps its id. One statement: two registrations at
 * once leave one row.
 */
export async function upsertRegistration(
  db: Database,
  accountId: string,
  values: Pick<RegistrationRow, 'campaignId' | 'owner' | 'pageId' | 'webhookUrl'>,
): Promise<RegistrationRow> {
  const [row] = await db
    .insert(leadWebhookRegistrations)
    .values({ ...values, accountId })
    .onConflictDoUpdate({
      target: [leadWebhookRegistrations.accountId, leadWebhookRegistrations.campaignId],
      set: {
        owner: values.owner,
        pageId: values.pageId,
        webhookUrl: values.webhookUrl,
        updatedAt: new Date(),
      },
    })
    .returning()
  if (!row) throw new Error('lead_webhook_registrations: the upsert returned no row')
  return row
}
