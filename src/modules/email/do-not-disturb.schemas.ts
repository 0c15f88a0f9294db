import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Email, Id, SEARCH_MAX_LENGTH, StringEnum, Text, Timestamp } from '../../platform/http/schemas.js'
import { DND_TYPES } from './tables.js'

/** The spec's do-not-disturb entry. */
export const DoNotDisturbEntry = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    value: Type.String(),
    type: StringEnum(DND_TYPES),
    reason: Type.String(),
    createdAt: Timestamp(),
  },
  { title: 'DoNotDisturbEntry' },
)
export type DoNotDisturbEntry = Static<typeof DoNotDisturbEntry>

export const AddBody = Type.Object(
  {
    value: Email({ description: 'The email address' }),
    type: Type.Optional(StringEnum(DND_TYPES, { default: 'permanent' })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { title: 'DoNotDisturbInput' },
)
export type AddBody = Static<typeof AddBody>

export const ListQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({ search: Type.Optional(Text(SEARCH_MAX_LENGTH)) }),
])

/* Examples of the API reference (test/openapi-reference.test.ts checks each against its schema). */

export const DO_NOT_DISTURB_INPUT_EXAMPLE = {
  value: 'ada@example.com',
  type: 'permanent',
  reason: 'Asked not to be emailed',
} satisfies AddBody

export const DO_NOT_DISTURB_EXAMPLE = {
  _id: '65f1c0ffee0000000000f001',
  account_id: '65f1c0ffee0000000000a001',
  ...DO_NOT_DISTURB_INPUT_EXAMPLE,
  createdAt: '2026-03-01T11:00:00.000Z',
} satisfies DoNotDisturbEntry
