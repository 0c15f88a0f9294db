import { Type } from '@sinclair/typebox'

// Documentation only (the route attaches validation errors instead of answering them): the spec has
// this endpoint answer 200 to anything, and one odd event must not get a whole batch redelivered for a
// day. The job keeps what it can use and logs the rest.
export const EventBatch = Type.Array(
  Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'A SendGrid event: email, timestamp (Unix seconds), event, sg_event_id, sg_message_id, ' +
        'custom args account_id and uid, useragent, ip, url (click), type (bounce), smtp-id, category',
    },
  ),
)

/**
 * The longest `sg_event_id` kept (SendGrid's are 22 characters): the events' primary key holds it in any
 * script. An event with a longer one is not usable, counted and logged like one without an id.
 */
export const SG_EVENT_ID_MAX_LENGTH = 255

export const Received = Type.Object(
  { success: Type.Literal(true), message: Type.String() },
  { title: 'Received' },
)
