import { Type } from '@sinclair/typebox'
import { Id, Integer } from '../../platform/http/schemas.js'

export const Credits = Type.Object({ account_id: Id(), balance: Type.Integer() }, { title: 'Credits' })

/** The longest reference a grant is applied once per (an invoice or payment id): the ledger's unique index holds it. */
export const CREDIT_REFERENCE_MAX_LENGTH = 255

export const GrantCreditsBody = Type.Object(
  {
    amount: Integer({ minimum: 1 }),
    reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: CREDIT_REFERENCE_MAX_LENGTH,
        description: 'Applied once per reference',
      }),
    ),
  },
  { title: 'CreditsGrant' },
)
