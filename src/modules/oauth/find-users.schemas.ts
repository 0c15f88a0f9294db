import { Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'

export const FindUsersQuery = Type.Composite([
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320, description: 'Part of the email, any case' }),
  }),
  PageQuery(10, 50),
])
