import { Type } from '@sinclair/typebox'
import { CREDENTIAL_MAX_LENGTH, Id, Nullable, Text, Timestamp } from '../../platform/http/schemas.js'

export const RemovedUser = Type.Object(
  {
    _id: Id(),
    removed_at: Timestamp(),
    account_ids: Type.Array(Id(), { description: 'The accounts the user was a member of until now' }),
  },
  { title: 'RemovedUser' },
)

export const PasswordResetBody = Type.Object(
  {
    password: Type.Optional(
      Text(CREDENTIAL_MAX_LENGTH, {
        minLength: 8,
        description: 'The new password; without it, one is generated and answered this once',
      }),
    ),
  },
  { title: 'PasswordResetInput' },
)

export const PasswordReset = Type.Object(
  {
    _id: Id(),
    password: Nullable(
      Type.String({ description: 'The generated password, shown this once; null when the request gave one' }),
    ),
  },
  { title: 'PasswordReset' },
)
