import { type Static, Type } from '@sinclair/typebox'
import { CREDENTIAL_MAX_LENGTH, Id, NAME_MAX_LENGTH, Text, Timestamp } from '../../platform/http/schemas.js'

export const SetMailSubuserBody = Type.Object(
  {
    username: Text(NAME_MAX_LENGTH, { minLength: 1 }),
    api_key: Text(CREDENTIAL_MAX_LENGTH, { minLength: 1 }),
  },
  { title: 'MailSubuserInput' },
)

/** The account's SendGrid subuser; the key itself is never shown again. */
export const MailSubuser = Type.Object(
  {
    account_id: Id(),
    username: Type.String(),
    api_key_set: Type.Literal(true),
    updated_at: Timestamp(),
  },
  { title: 'MailSubuser' },
)
export type MailSubuser = Static<typeof MailSubuser>
