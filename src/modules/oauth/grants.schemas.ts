import { type Static, Type } from '@sinclair/typebox'
import { Id, Timestamp } from '../../platform/http/schemas.js'

export const Grant = Type.Object(
  {
    client_id: Id(),
    app_name: Type.String(),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Grant' },
)
export type Grant = Static<typeof Grant>

export const GrantParams = Type.Object({ client_id: Id() })

export const RevokedGrant = Type.Object({ revoked: Type.Literal(true) }, { title: 'RevokedGrant' })
