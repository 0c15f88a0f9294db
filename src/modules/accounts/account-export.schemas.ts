import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, Timestamp } from '../../platform/http/schemas.js'

/** The first line of an account's export: `{"export": …}`. */
export const AccountExportHeader = Type.Object({
  format_version: Integer({ minimum: 1 }),
  account_id: Id(),
  sub_account_ids: Type.Array(Id(), { description: 'Every account below it, at any depth' }),
  started_at: Timestamp(),
  tables: Type.Array(Type.String(), { description: 'The tables exported, in the order their rows come' }),
  secrets_left_out: Type.Record(Type.String(), Type.Array(Type.String()), {
    description: 'Per table, the columns never exported: sealed secrets, password and token hashes',
  }),
})
export type AccountExportHeader = Static<typeof AccountExportHeader>

/** Every line between the first and the last: one row of a table, its columns as PostgreSQL's JSON. */
export const AccountExportRow = Type.Object({
  table: Type.String(),
  row: Type.Record(Type.String(), Type.Unknown()),
})

/** The last line, `{"export_end": …}`: an export without it was cut short. */
export const AccountExportEnd = Type.Object({
  rows: Integer({ minimum: 0 }),
  rows_by_table: Type.Record(Type.String(), Integer({ minimum: 0 })),
})
export type AccountExportEnd = Static<typeof AccountExportEnd>

/** One line of the export, as OpenAPI describes the NDJSON body (one JSON object per line). */
export const AccountExportLine = Type.Union([
  Type.Object({ export: AccountExportHeader }),
  AccountExportRow,
  Type.Object({ export_end: AccountExportEnd }),
])
