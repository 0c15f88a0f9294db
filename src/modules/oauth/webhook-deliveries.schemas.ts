import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { WEBHOOK_DELIVERY_STATUSES } from './tables.js'

export const WebhookAttempt = Type.Object(
  {
    at: Timestamp(),
    status_code: Nullable(
      Integer({
        minimum: 100,
        maximum: 599,
        description:
          "The receiver's answer; null when none came (timeout, connection refused, address refused)",
      }),
    ),
    duration_ms: Integer({
      minimum: 0,
      description: 'From the request sent to the answer, or to the failure',
    }),
    error: Nullable(Type.String({ description: 'Why no answer came; null when one did' })),
  },
  { title: 'WebhookAttempt' },
)

/** One notification to one app, with every attempt at it, as Stripe and GitHub show their deliveries. */
export const WebhookDelivery = Type.Object(
  {
    _id: Id(),
    webhook_id: Type.String({
      description: 'The `webhook-id` header of every attempt: receivers drop repeats by it',
    }),
    client_id: Id(),
    account_id: Id(),
    event: Type.String(),
    status: StringEnum(WEBHOOK_DELIVERY_STATUSES, {
      description:
        'pending: an attempt is due; retrying: an attempt failed, the next is scheduled; succeeded: answered 2xx; ' +
        'dead: the retry schedule ran out (replay it); dropped: the app lost its webhook_url, grant or secret',
    }),
    attempts: Type.Array(WebhookAttempt, { description: 'Oldest first, those of replays too' }),
    next_attempt_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When the next attempt is due (while one is in flight, when its lease ends); null once settled',
      }),
    ),
    dropped_reason: Nullable(Type.String()),
    notification: Type.Object(
      {
        event: Type.String(),
        data: Type.Object({}, { additionalProperties: true }),
        account_id: Id(),
        timestamp: Timestamp(),
      },
      { description: "The body sent: the spec's app notification" },
    ),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'WebhookDelivery' },
)
export type WebhookDeliveryView = Static<typeof WebhookDelivery>

export const DeliveriesQuery = Type.Composite([
  PageQuery(20, 100),
  Type.Object({ status: Type.Optional(StringEnum(WEBHOOK_DELIVERY_STATUSES)) }),
])
export type DeliveriesQuery = Static<typeof DeliveriesQuery>

export const DeliveryParams = Type.Object({ id: Id(), delivery_id: Id() })
