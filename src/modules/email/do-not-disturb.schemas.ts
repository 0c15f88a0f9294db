import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Email, Id, SEARCH_MAX_LENGTH, StringEnum, Text, Timestamp } from '../../platform/http/schemas.js'
import { DND_TYPES } from './tables.js'

/** The spec's do-not-disturb entry. */
export const DoNotDisturbEntry = Type.Object({
  _id: Id(),
  account_id: Id(),
  value: Type.String(),
  type: StringEnum(DND_TYPES),
  reason: Type.String(),
  createdAt: Timestamp(),
})
export type DoNotDisturbEntry = Static<typeof DoNotDisturbEntry>

export const AddBody = Type.Object({
  value: Email({ description: 'The email address' }),
  type: Type.Optional(StringEnum(DND_TYPES, { default: 'permanent' })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
})
export type AddBody = Static<typeof AddBody>

export const ListQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({ search: Type.Optional(Text(SEARCH_MAX_LENGTH)) }),
])

export const Removed = Type.Object({ _id: Id(), deleted: Type.Boolean() })
