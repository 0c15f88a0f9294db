import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import {
  FollowUp,
  MAX_DELAY_HOURS,
  REVIEW_PLATFORMS,
  ReviewConditions,
  SEND_METHODS,
  SendWindow,
  TRIGGER_TYPES,
} from './documents.schemas.js'

/** The spec's auto review request configuration, with the optional follow-up, send window and time zone. */
export const Configuration = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    parentAccount: Id(),
    name: Type.String(),
    enabled: Type.Boolean(),
    trigger: StringEnum(TRIGGER_TYPES),
    delay_hours: Type.Number(),
    platforms: Type.Array(StringEnum(REVIEW_PLATFORMS)),
    template_id: Nullable(Id()),
    conditions: ReviewConditions,
    send_method: StringEnum(SEND_METHODS),
    from_email: Nullable(Type.String()),
    from_phone: Nullable(Type.String()),
    follow_up: Nullable(FollowUp),
    send_window: Nullable(SendWindow),
    timezone: Type.String(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'ReviewConfiguration' },
)
export type Configuration = Static<typeof Configuration>

/**
 * `PUT /reviews/auto-review-request`: the whole configuration, which replaces the one stored. The spec's five
 * fields are required; what is left out is absent afterwards (optional fields null, `name`, `timezone` back to
 * their defaults). `trigger` and `delay_hours` take any value here, and `platforms` any names: the service
 * judges them, so that each refusal answers with the spec's own message.
 */
export const PutBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    enabled: Type.Boolean(),
    trigger: Type.Unknown({
      description: `One of ${TRIGGER_TYPES.join(', ')}; anything else answers 400 'Invalid trigger type'`,
    }),
    delay_hours: Type.Unknown({
      description: `Hours after the event, a number from 0 to ${MAX_DELAY_HOURS}; a negative or non-number answers 400 'Delay hours must be positive'`,
    }),
    platforms: Type.Array(Type.String({ maxLength: 100, description: REVIEW_PLATFORMS.join(', ') }), {
      minItems: 1,
      maxItems: 10,
    }),
    template_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    conditions: Type.Optional(ReviewConditions),
    send_method: StringEnum(SEND_METHODS),
    from_email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
    from_phone: Type.Optional(
      Nullable(Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +14155550100' })),
    ),
    follow_up: Type.Optional(Nullable(FollowUp)),
    send_window: Type.Optional(Nullable(SendWindow)),
    timezone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'IANA name, e.g. Europe/Paris; default UTC' }),
    ),
  },
  { title: 'ReviewConfigurationInput', additionalProperties: false },
)
export type PutBody = Static<typeof PutBody>

export const SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const

/** The spec's list query: `page` 0 and 1 both start at the first configuration. */
export const ListQuery = Type.Object({
  limit: Integer({ minimum: 1, maximum: 100, default: 10 }),
  page: Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  sort_by: StringEnum(SORT_FIELDS, { default: 'created_at' }),
  order: StringEnum(['asc', 'desc'] as const, { default: 'desc' }),
})
export type ListQuery = Static<typeof ListQuery>

export const ConfigurationList = Type.Object(
  {
    configs: Type.Array(Configuration),
    pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
  },
  { title: 'ReviewConfigurationList' },
)

/**
 * The saved configuration, and what will keep it from sending: a platform without a review link, a trigger
 * nothing connected sends, a send window read as open all day.
 */
export const SavedEnvelope = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.String(),
    data: Configuration,
    warnings: Type.Array(Type.String()),
  },
  { title: 'ReviewConfigurationSaved' },
)

/** The configuration of the reference's examples (ids and times made up): what a `PUT` sends and answers. */
export const CONFIGURATION_EXAMPLE = {
  _id: '65f1c0ffee0000000000e001',
  account_id: '65f1c0ffee0000000000a001',
  parentAccount: '65f1c0ffee0000000000a001',
  name: 'After each order',
  enabled: true,
  trigger: 'order_completed',
  delay_hours: 48,
  platforms: ['google', 'facebook'],
  template_id: '65f1c0ffee0000000000e101',
  conditions: {
    min_order_value: 2000,
    exclude_refunded: true,
    customer_segment: 'all',
    exclude_repeated: true,
  },
  send_method: 'email',
  from_email: 'reviews@example.com',
  from_phone: null,
  follow_up: { enabled: true, delay_hours: 72 },
  send_window: { start: '09:00', end: '20:00' },
  timezone: 'Europe/Paris',
  created_at: '2025-03-14T09:26:53.000Z',
  updated_at: '2025-03-14T09:26:53.000Z',
} satisfies Configuration

/** The body that stores a configuration: its fields without those the service sets. */
const putBodyOf = ({
  _id: _,
  account_id: _account,
  parentAccount: _parent,
  created_at: _created,
  updated_at: _updated,
  ...body
}: Configuration): PutBody => body
export const PUT_EXAMPLE = putBodyOf(CONFIGURATION_EXAMPLE)

/** A saved configuration's answer, with the warning of a platform that has no review link yet. */
export const SAVED_EXAMPLE = {
  success: true,
  message: 'SUCCESS',
  data: CONFIGURATION_EXAMPLE,
  warnings: [
    'No review link for facebook: its requests are skipped (no_review_link) until one is added at /reviews/links',
  ],
} satisfies Static<typeof SavedEnvelope>
