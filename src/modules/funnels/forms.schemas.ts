import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Timestamp } from '../../platform/http/schemas.js'
import { FunnelId } from './funnel-access.schemas.js'

/** At most this many fields in one submission. */
export const MAX_FIELDS = 50
/** At most this many bytes (UTF-8) in one field's value. */
export const MAX_VALUE_BYTES = 10_240
/**
 * The honeypot: published forms carry a hidden input of this name that people leave empty. A submission
 * with it filled is answered like any other and stored nowhere, so a bot learns nothing.
 */
export const HONEYPOT_FIELD = '_hp'

export const SubmitBody = Type.Object(
  {
    funnel_id: FunnelId({ description: 'The funnel the page belongs to' }),
    step_id: Id({ description: 'The step (page) the form is on' }),
    form_id: Type.String({ minLength: 1, maxLength: 100 }),
    fields: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      maxProperties: MAX_FIELDS,
      propertyNames: { minLength: 1, maxLength: 100 },
      additionalProperties: true,
      description: `The form's fields by name: at most ${MAX_FIELDS}, each value a string of at most ${MAX_VALUE_BYTES} bytes. \`${HONEYPOT_FIELD}\` is the honeypot: leave it out or empty.`,
    }),
    visitor_id: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { title: 'FormSubmissionInput' },
)
export type SubmitBody = Static<typeof SubmitBody>

/** What a submitter is told: the submission's id and time (a honeypot catch is told the same). */
export const Submitted = Type.Object({ _id: Id(), submitted_at: Timestamp() }, { title: 'FormSubmitted' })
export type Submitted = Static<typeof Submitted>

/** The spec's form submission, with the name of its step (null once the step is deleted) and its contact. */
export const FormSubmission = Type.Object(
  {
    _id: Id(),
    funnel_id: Id(),
    step_id: Id(),
    step_name: Type.Union([Type.String(), Type.Null()]),
    form_id: Type.String(),
    fields: Type.Record(Type.String(), Type.String()),
    visitor_id: Type.Optional(Type.String()),
    ip_address: Type.Optional(Type.String()),
    user_agent: Type.Optional(Type.String()),
    contact_id: Type.Union([Id(), Type.Null()]),
    submitted_at: Timestamp(),
  },
  { title: 'FormSubmission' },
)
export type FormSubmission = Static<typeof FormSubmission>

const DateBound = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: 40,
      description: `${description}: an ISO 8601 date (a whole day, UTC) or date-time`,
    }),
  )

export const DateRangeQuery = Type.Object({
  start_date: DateBound('Submitted at or after'),
  end_date: DateBound('Submitted at or before'),
})
export type DateRangeQuery = Static<typeof DateRangeQuery>

export const FormsQuery = Type.Composite([
  CursorPageQuery(10, 100),
  DateRangeQuery,
  Type.Object({
    search: Type.Optional(Type.String({ maxLength: 200, description: 'Text in any field value' })),
  }),
])
export type FormsQuery = Static<typeof FormsQuery>

/** A form post of the reference's examples (ids and time made up). */
export const SUBMIT_EXAMPLE = {
  funnel_id: '65f1c0ffee0000000000f001',
  step_id: '65f1c0ffee0000000000f101',
  form_id: 'spring-optin',
  fields: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+14155550100' },
} satisfies SubmitBody

export const SUBMITTED_EXAMPLE = {
  _id: '65f1c0ffee0000000000f501',
  submitted_at: '2025-03-14T10:02:17.000Z',
} satisfies Submitted
