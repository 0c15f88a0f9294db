import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { WEBHOOK_EVENT_STATUSES, WEBHOOK_SOURCES } from './tables.js'

/**
 * The longest id of a provider's event, payment or order the reviews keep: Stripe's and Square's are under 40
 * characters, an account's own event id is 200 at most (kept behind its account id). The unique indexes over
 * them (event ids, the requests' and refunds' `source_ref`) hold it in any script.
 */
export const PROVIDER_ID_MAX_LENGTH = 255

/** A review event as received from its source, and what its processing made of it, for the operator. */
export const WebhookEvent = Type.Object(
  {
    _id: Id(),
    source: StringEnum(WEBHOOK_SOURCES),
    event_id: Type.String({ description: "The source's event id (an account's own behind its account id)" }),
    type: Type.String(),
    account_id: Nullable(Type.String()),
    status: StringEnum(WEBHOOK_EVENT_STATUSES),
    reason: Nullable(Type.String({ description: 'Why it was skipped or failed' })),
    payload: Type.Unknown({ description: 'The event as received' }),
    created_at: Timestamp(),
    processed_at: Nullable(Timestamp()),
  },
  { title: 'ReviewWebhookEvent' },
)
export type WebhookEvent = Static<typeof WebhookEvent>

export const WebhookEventsQuery = Type.Composite([
  CursorPageQuery(20, 100),
  Type.Object({
    status: Type.Optional(StringEnum(WEBHOOK_EVENT_STATUSES)),
    source: Type.Optional(StringEnum(WEBHOOK_SOURCES)),
  }),
])
export type WebhookEventsQuery = Static<typeof WebhookEventsQuery>
