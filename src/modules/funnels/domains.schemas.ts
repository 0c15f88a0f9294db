import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Timestamp } from '../../platform/http/schemas.js'

/** A custom domain of the account that its funnels may be served on. */
export const FunnelDomain = Type.Object(
  {
    _id: Id(),
    name: Type.String({ description: 'The hostname, lower case' }),
    ssl_enabled: Type.Boolean(),
    created_at: Timestamp(),
  },
  { title: 'FunnelDomain' },
)
export type FunnelDomain = Static<typeof FunnelDomain>

export const CreateDomainBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, description: 'A hostname such as shop.example.com' }),
    ssl_enabled: Type.Optional(Type.Boolean({ default: false })),
  },
  { title: 'FunnelDomainInput' },
)
export type CreateDomainBody = Static<typeof CreateDomainBody>

export const DomainsQuery = Type.Composite([
  PageQuery(50, 100),
  Type.Object({ search: Type.Optional(Type.String({ maxLength: 253 })) }),
])
export type DomainsQuery = Static<typeof DomainsQuery>
