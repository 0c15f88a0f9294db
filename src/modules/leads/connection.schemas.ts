import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { TOKEN_STATUSES } from './tables.js'

/** A token record's `source`: `socialnet-leads` for lead ads; other connections keep their own. */
const Source = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'e.g. socialnet-leads' })

export const StoreTokenBody = Type.Object(
  {
    source: Source,
    access_token: Type.String({ minLength: 1, maxLength: 4096 }),
    /** Seconds the token lives, as Meta's login gives it; 0 when it does not expire. */
    expires_in: Integer({ minimum: 0 }),
  },
  { title: 'SocialTokenInput' },
)
export type StoreTokenBody = Static<typeof StoreTokenBody>

/** The spec's token record, without the token itself, which is never returned. */
export const TokenRecord = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    created_by: Nullable(Type.String()),
    source: Type.String(),
    token: Type.Object({ token_type: Type.Literal('bearer'), expires_in: Type.Integer() }),
    /** `invalid` once Graph refused it (code 190); a newly stored token makes it `valid` again. */
    status: StringEnum(TOKEN_STATUSES),
    invalid_reason: Nullable(Type.String()),
    expires_at: Nullable(Timestamp()),
    deleted: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'SocialTokenRecord' },
)
export type TokenRecord = Static<typeof TokenRecord>

export const DisconnectQuery = Type.Object({ source: Source })

export const Disconnected = Type.Object(
  {
    source: Type.String(),
    deleted: Timestamp(),
    /** The account's `socialnet_ads` campaigns marked `is_deleted` (for `socialnet-leads`). */
    campaigns_deleted: Type.Integer(),
  },
  { title: 'SocialDisconnected' },
)
export type Disconnected = Static<typeof Disconnected>
