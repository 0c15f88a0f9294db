import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'

export const AUDIT_EVENTS = [
  'consent.granted',
  'token.issued',
  'token.refreshed',
  'grant.revoked',
  'client.authentication_failed',
] as const
export type AuditEventName = (typeof AUDIT_EVENTS)[number]

export const AuditEvent = Type.Object(
  {
    _id: Id(),
    event: StringEnum(AUDIT_EVENTS),
    client_id: Type.Union([Id(), Type.Null()]),
    user_id: Type.Union([Id(), Type.Null()]),
    account_id: Type.Union([Id(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    detail: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp(),
  },
  { title: 'AuditEvent' },
)
export type AuditEvent = Static<typeof AuditEvent>

export const AuditQuery = Type.Composite([
  Type.Object({ client_id: Type.Optional(Id()), account_id: Type.Optional(Id()) }),
  CursorPageQuery(50, 200),
])
export type AuditQuery = Static<typeof AuditQuery>
