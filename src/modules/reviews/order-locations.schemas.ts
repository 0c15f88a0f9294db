import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Timestamp } from '../../platform/http/schemas.js'

/** A Square location id: letters, digits, `_` and `-` (Square's ids are 13 to 32 such characters). */
const LocationId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'A Square location id',
})

/** A Square location the account claims: Square's order events for it are the account's. */
export const OrderLocation = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    location_id: Type.String(),
    created_at: Timestamp(),
  },
  { title: 'OrderLocation' },
)
export type OrderLocation = Static<typeof OrderLocation>

export const ClaimBody = Type.Object(
  { location_id: LocationId },
  { title: 'OrderLocationClaim', additionalProperties: false },
)
export type ClaimBody = Static<typeof ClaimBody>

export const LocationParams = Type.Object({ location_id: LocationId })

export const ListQuery = PageQuery(20, 100)
export type ListQuery = Static<typeof ListQuery>

export const Released = Type.Object(
  { location_id: Type.String(), deleted: Type.Boolean() },
  { title: 'OrderLocationReleased' },
)
