import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Email, Id, Timestamp } from '../../platform/http/schemas.js'

export const Contact = Type.Object({
  _id: Id(),
  account_id: Id(),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  phone: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Contact = Static<typeof Contact>

export const CreateContactBody = Type.Object({
  email: Type.Optional(Email()),
  name: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String()),
})

export const UpdateContactBody = Type.Object(CreateContactBody.properties, { minProperties: 1 })

const optionalText = () => Type.Optional(Type.String())

/** Bodies of the records email variables read, per admin path segment. */
export const VariableSourceBodies = {
  persons: Type.Object({ first_name: optionalText(), last_name: optionalText(), email: optionalText() }),
  businesses: Type.Object({
    name: Type.String({ minLength: 1 }),
    address: optionalText(),
    phone: optionalText(),
  }),
  instasites: Type.Object({ url: Type.String({ minLength: 1 }), name: optionalText() }),
  instareports: Type.Object({ url: Type.String({ minLength: 1 }), link: optionalText() }),
}
/** The kinds of records email variables read: persons, businesses, instasites, instareports. */
export type VariableSourceKind = keyof typeof VariableSourceBodies

export const VariableSource = Type.Object(
  { _id: Id(), account_id: Id(), created_at: Timestamp(), updated_at: Timestamp() },
  { additionalProperties: Type.String() },
)
/** A record email variables read: its own fields beside the ids and times. */
export type VariableSourceRecord = Static<typeof VariableSource>

export const ContactsQuery = Type.Composite([
  CursorPageQuery(10, 100),
  Type.Object({ search: Type.Optional(Type.String()) }),
])
