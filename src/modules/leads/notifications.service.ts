import type { Database } from '../../platform/db/connection.js'
import type { Changes } from '../../platform/events/changes.js'
import type { Events } from '../../platform/events/emit.js'

/** The spec's "notifications sent": the app webhook (`socialnet.disconnected`) when the token is removed. */
export const SOCIALNET_DISCONNECTED = 'socialnet.disconnected'
/** Graph refused the account's token (code 190): leads wait as `failed` until a new one is stored. */
export const SOCIALNET_TOKEN_INVALID = 'socialnet.token_invalid'
/** A lead was captured into a contact. */
export const LEAD_CREATED = 'lead.created'

export interface Notifier {
  events: Events
  changes: Changes
}

/**
 * Tells the account, in the caller's transaction: a platform event for its connected clients and the
 * change apps authorized in the account hear of through their webhook, under the same name.
 */
export async function notifyAccount(
  notifier: Notifier,
  tx: Database,
  accountId: string,
  event: string,
  data: object,
): Promise<void> {
  await notifier.events.emit(tx, accountId, event, data)
  await notifier.changes.announce(tx, accountId, event, data)
}
