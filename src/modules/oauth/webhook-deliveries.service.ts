import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import { findApp } from './apps.repository.js'
import {
  type DeliveryRow,
  findDelivery,
  listDeliveries,
  replaySettledDelivery,
} from './webhook-deliveries.repository.js'
import type { DeliveriesQuery, WebhookDeliveryView } from './webhook-deliveries.schemas.js'
import { type AppNotification, webhookIdOf } from './webhooks.service.js'

const deliveryView = (row: DeliveryRow): WebhookDeliveryView => ({
  _id: row.id,
  webhook_id: webhookIdOf(row.id),
  client_id: row.clientId,
  account_id: row.accountId,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
  dropped_reason: row.droppedReason,
  notification: row.notification as AppNotification,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

async function assertAppExists(db: Database, clientId: string): Promise<void> {
  if (!(await findApp(db, clientId))) throw new NotFound('App not found')
}

/** The app's deliveries, newest first, all or of one status. */
export async function listWebhookDeliveries(
  db: Database,
  clientId: string,
  query: DeliveriesQuery,
): Promise<{ data: WebhookDeliveryView[]; pagination: Pagination }> {
  await assertAppExists(db, clientId)
  return paginate(
    query,
    (window) => listDeliveries(db, clientId, { status: query.status, ...window }),
    deliveryView,
  )
}

/**
 * Queues a settled delivery (succeeded, dead or dropped) again, with the same `webhook-id`, as a new series
 * of attempts on the retry schedule. A delivery still waiting is answered as it is: a repeated replay
 * queues nothing more.
 */
export async function replayWebhookDelivery(
  db: Database,
  clientId: string,
  deliveryId: string,
): Promise<WebhookDeliveryView> {
  await assertAppExists(db, clientId)
  const row =
    (await replaySettledDelivery(db, clientId, deliveryId)) ?? (await findDelivery(db, clientId, deliveryId))
  if (!row) throw new NotFound('Webhook delivery not found')
  return deliveryView(row)
}
