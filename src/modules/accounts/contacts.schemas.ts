import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import {
  EMAIL_MAX_LENGTH,
  Email,
  Id,
  NAME_MAX_LENGTH,
  PHONE_MAX_LENGTH,
  SEARCH_MAX_LENGTH,
  TEXT_MAX_LENGTH,
  Text,
  Timestamp,
  URL_MAX_LENGTH,
} from '../../platform/http/schemas.js'

export const Contact = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    email: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    phone: Type.String(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Contact' },
)
export type Contact = Static<typeof Contact>

export const CreateContactBody = Type.Object(
  {
    email: Type.Optional(Email()),
    name: Type.Optional(Text(NAME_MAX_LENGTH)),
    phone: Type.Optional(Text(PHONE_MAX_LENGTH)),
  },
  { title: 'ContactInput' },
)

export const UpdateContactBody = Type.Object(CreateContactBody.properties, {
  title: 'ContactUpdate',
  minProperties: 1,
})

const optionalText = (maxLength: number) => Type.Optional(Text(maxLength))
const Url = Text(URL_MAX_LENGTH, { minLength: 1 })

/** Bodies of the records email variables read, per admin path segment. */
export const VariableSourceBodies = {
  persons: Type.Object({
    first_name: optionalText(NAME_MAX_LENGTH),
    last_name: optionalText(NAME_MAX_LENGTH),
    // Text as the variable shows it, not checked as an address: EMAIL_MAX_LENGTH bounds it all the same.
    email: optionalText(EMAIL_MAX_LENGTH),
  }),
  businesses: Type.Object({
    name: Text(NAME_MAX_LENGTH, { minLength: 1 }),
    address: optionalText(TEXT_MAX_LENGTH),
    phone: optionalText(PHONE_MAX_LENGTH),
  }),
  instasites: Type.Object({ url: Url, name: optionalText(NAME_MAX_LENGTH) }),
  instareports: Type.Object({ url: Url, link: optionalText(URL_MAX_LENGTH) }),
}
/** The kinds of records email variables read: persons, businesses, instasites, instareports. */
export type VariableSourceKind = keyof typeof VariableSourceBodies

export const VariableSource = Type.Object(
  { _id: Id(), account_id: Id(), created_at: Timestamp(), updated_at: Timestamp() },
  { title: 'VariableSource', additionalProperties: Type.String() },
)
/** A record email variables read: its own fields beside the ids and times. */
export type VariableSourceRecord = Static<typeof VariableSource>

export const ContactsQuery = Type.Composite([
  CursorPageQuery(10, 100),
  Type.Object({ search: Type.Optional(Text(SEARCH_MAX_LENGTH)) }),
])

/* Examples of the API reference (test/openapi-reference.test.ts checks each against its schema). */

export const CONTACT_INPUT_EXAMPLE = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '+44 20 7946 0958',
} satisfies Static<typeof CreateContactBody>

export const CONTACT_EXAMPLE = {
  _id: '65f1c0ffee0000000000c001',
  account_id: '65f1c0ffee0000000000a001',
  ...CONTACT_INPUT_EXAMPLE,
  created_at: '2026-03-01T09:45:00.000Z',
  updated_at: '2026-03-01T09:45:00.000Z',
} satisfies Contact
