import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Integer } from '../../platform/http/schemas.js'

/** A funnel tag of the account, with the number of its live funnels that carry it. */
export const FunnelTag = Type.Object(
  { _id: Id(), name: Type.String(), count: Integer({ minimum: 0 }) },
  { title: 'FunnelTag' },
)
export type FunnelTag = Static<typeof FunnelTag>

export const CreateTagBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { title: 'FunnelTagInput' },
)
export type CreateTagBody = Static<typeof CreateTagBody>

export const TagsQuery = Type.Composite([
  PageQuery(50, 100),
  Type.Object({ search: Type.Optional(Type.String({ maxLength: 100 })) }),
])
export type TagsQuery = Static<typeof TagsQuery>
