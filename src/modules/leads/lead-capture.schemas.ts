import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { LEAD_SOURCES, LEAD_STATUSES } from './tables.js'

/** The spec's lead data `field_data`, kept as Graph answered it. */
const FieldData = Type.Array(Type.Object({ name: Type.String(), values: Type.Array(Type.String()) }))

/** A lead as the account sees it: what Meta sent, the fields read from it, and what became of it. */
export const Lead = Type.Object(
  {
    _id: Id(),
    leadgen_id: Type.String(),
    campaign_id: Nullable(Id()),
    page_id: Type.String(),
    form_id: Type.String(),
    ad_id: Nullable(Type.String()),
    created_time: Timestamp(),
    field_data: Nullable(FieldData),
    fields: Nullable(
      Type.Record(Type.String(), Type.String(), {
        description: 'The standard lead fields (full_name, email, phone_number, …), the first value of each',
      }),
    ),
    contact_id: Nullable(Id()),
    status: StringEnum(LEAD_STATUSES),
    reason: Nullable(
      Type.String({
        description:
          'Why it failed: token_invalid, token_missing, throttled, fetch_failed: …, no_contact_details',
      }),
    ),
    source: StringEnum(LEAD_SOURCES),
    received_at: Timestamp(),
    captured_at: Nullable(Timestamp()),
  },
  { title: 'Lead' },
)
export type Lead = Static<typeof Lead>

export const LeadsQuery = Type.Composite([
  CursorPageQuery(20, 100),
  Type.Object({
    status: Type.Optional(StringEnum(LEAD_STATUSES)),
    from: Type.Optional(Timestamp()),
    to: Type.Optional(Timestamp()),
  }),
])
export type LeadsQuery = Static<typeof LeadsQuery>

/** A lead of the reference's examples (ids and times made up), captured from the example campaign's form. */
export const LEAD_EXAMPLE = {
  _id: '65f1c0ffee0000000000d101',
  leadgen_id: '444444444444444',
  campaign_id: '65f1c0ffee0000000000d001',
  page_id: '104857600012345',
  form_id: '987654321098765',
  ad_id: null,
  created_time: '2025-03-14T10:20:30.000Z',
  field_data: [
    { name: 'full_name', values: ['Ada Lovelace'] },
    { name: 'email', values: ['ada@example.com'] },
  ],
  fields: { full_name: 'Ada Lovelace', email: 'ada@example.com' },
  contact_id: '65f1c0ffee0000000000a301',
  status: 'captured',
  reason: null,
  source: 'webhook',
  received_at: '2025-03-14T10:20:31.000Z',
  captured_at: '2025-03-14T10:20:33.000Z',
} satisfies Lead
