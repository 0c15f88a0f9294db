import { Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id } from '../../platform/http/schemas.js'

export const FoundUser = Type.Object({
  _id: Id(),
  email: Type.String(),
  name: Type.String(),
  accounts: Type.Array(Type.Object({ _id: Id(), name: Type.String(), main: Type.Boolean() })),
})

export const FindUsersQuery = Type.Composite([
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320, description: 'Part of the email, any case' }),
  }),
  PageQuery(10, 50),
])
