import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'

/**
 * A removal's state: `queued` (asked for, its job waiting), `running`, `done` (every row gone), `failed`
 * (the last attempt failed, `last_error` says where; the job is retried, and a new DELETE queues it again).
 */
export const REMOVAL_STATUSES = ['queued', 'running', 'done', 'failed'] as const
export const RemovalStatus = StringEnum(REMOVAL_STATUSES)
export type RemovalStatus = Static<typeof RemovalStatus>

export const RemovalTable = Type.Object(
  {
    table: Type.String(),
    rows_deleted: Integer({ minimum: 0 }),
    done: Type.Boolean(),
  },
  { title: 'AccountRemovalTable' },
)

/** `GET /v1/admin/accounts/:id/removal`: how far the removal of the account and its sub-accounts is. */
export const AccountRemoval = Type.Object(
  {
    account_id: Id(),
    sub_account_ids: Type.Array(Id(), {
      description: 'Every account below it when the removal was asked for',
    }),
    status: RemovalStatus,
    tables: Type.Array(RemovalTable, {
      description:
        'Every table holding accounts’ rows, in the order the removal deletes them (children first)',
    }),
    rows_deleted: Integer({ minimum: 0 }),
    tables_done: Integer({ minimum: 0 }),
    providers_queued: Type.Boolean({
      description: 'Whether the clean-up at the providers (SendGrid, Meta, the edge) was queued',
    }),
    attempts: Integer({ minimum: 0 }),
    last_error: Nullable(Type.String()),
    requested_at: Timestamp(),
    started_at: Nullable(Timestamp()),
    finished_at: Nullable(Timestamp()),
  },
  { title: 'AccountRemoval' },
)
export type AccountRemoval = Static<typeof AccountRemoval>
