import { Type } from '@sinclair/typebox'
import { Id, Integer } from '../../platform/http/schemas.js'

export const Credits = Type.Object({ account_id: Id(), balance: Type.Integer() })

export const GrantCreditsBody = Type.Object({
  amount: Integer({ minimum: 1 }),
  reference: Type.Optional(Type.String({ minLength: 1, description: 'Applied once per reference' })),
})
