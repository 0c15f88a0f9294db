import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { TEMPLATE_CHANNELS } from './documents.schemas.js'

/** Twilio refuses a message body over 1600 characters. */
export const MAX_SMS_BODY = 1600

const BODY_DESCRIPTION =
  'The email variables ({{contact.first_name}}, …) plus {{customer.name}}, {{business.name}} and {{review.link}}'

/** A review request's message: an email (subject and HTML body) or an SMS (body only). */
export const Template = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    name: Type.String(),
    channel: StringEnum(TEMPLATE_CHANNELS),
    subject: Type.String(),
    body: Type.String(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'ReviewTemplate' },
)
export type Template = Static<typeof Template>

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  subject: Type.String({ maxLength: 500 }),
  body: Type.String({ minLength: 1, maxLength: 20_000, description: BODY_DESCRIPTION }),
}

export const CreateBody = Type.Object(
  {
    name: fields.name,
    channel: StringEnum(TEMPLATE_CHANNELS),
    subject: Type.Optional(fields.subject),
    body: fields.body,
  },
  { title: 'ReviewTemplateInput', additionalProperties: false },
)
export type CreateBody = Static<typeof CreateBody>

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    subject: Type.Optional(fields.subject),
    body: Type.Optional(fields.body),
  },
  { title: 'ReviewTemplateUpdate', additionalProperties: false, minProperties: 1 },
)
export type UpdateBody = Static<typeof UpdateBody>

export const ListQuery = PageQuery(10, 100)

/** A template of the reference's examples (ids and times made up). */
export const TEMPLATE_INPUT_EXAMPLE = {
  name: 'Thank you, with a review link',
  channel: 'email',
  subject: 'How did we do, {{customer.name}}?',
  body: '<p>Thank you for your order at {{business.name}}.</p><p><a href="{{review.link}}">Leave a review</a></p>',
} satisfies CreateBody

export const TEMPLATE_EXAMPLE = {
  _id: '65f1c0ffee0000000000e101',
  account_id: '65f1c0ffee0000000000a001',
  ...TEMPLATE_INPUT_EXAMPLE,
  created_at: '2025-03-14T09:20:00.000Z',
  updated_at: '2025-03-14T09:20:00.000Z',
} satisfies Template
