import { type SQL, type SQLChunk, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { rowsOf } from '../../platform/db/rows.js'

/** A table as PostgreSQL's catalog describes it: what the export reads and the removal deletes. */
export interface CatalogTable {
  name: string
  /** Its columns in table order, without generated ones (derived from the others: a search vector). */
  columns: string[]
  /** Its primary key's columns in key order: the keyset the export pages on. Empty when it has none. */
  keyColumns: string[]
  hasAccountId: boolean
}

/** A foreign key of the schema: `table.column` references `referenced.referencedColumn`. */
export interface CatalogReference {
  table: string
  column: string
  referenced: string
  referencedColumn: string
}

const list = (items: SQLChunk[]) => sql.join(items, sql`, `)

/**
 * Every table of the service's schema, read from the catalog (not from the modules' table definitions, so
 * that a table added later is seen). A partition is read through its partitioned table, never twice.
 */
export async function listCatalogTables(db: Database): Promise<CatalogTable[]> {
  const result = await db.execute(sql`
    select c.relname::text as name,
      array(select a.attname::text from pg_attribute a
            where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
            order by a.attnum) as columns,
      array(select a.attname::text
            from pg_index i, unnest(i.indkey) with ordinality as k(attnum, position), pg_attribute a
            where i.indrelid = c.oid and i.indisprimary and a.attrelid = c.oid and a.attnum = k.attnum
            order by k.position) as key_columns,
      exists(select from pg_attribute a
             where a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped) as has_account_id
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`)
  return rowsOf<{ name: string; columns: string[]; key_columns: string[]; has_account_id: boolean }>(
    result,
  ).map((row) => ({
    name: row.name,
    columns: row.columns,
    keyColumns: row.key_columns,
    hasAccountId: row.has_account_id,
  }))
}

/**
 * Every foreign key between the schema's tables, from the catalog (`pg_constraint`), each column of a
 * composite key on its own line. A partition's copy of its table's key is left out.
 */
export async function listCatalogReferences(db: Database): Promise<CatalogReference[]> {
  const result = await db.execute(sql`
    select t.relname::text as "table", a.attname::text as "column",
      r.relname::text as referenced, ra.attname::text as referenced_column
    from pg_constraint k
      join pg_class t on t.oid = k.conrelid
      join pg_class r on r.oid = k.confrelid
      join pg_namespace n on n.oid = t.relnamespace
      cross join lateral unnest(k.conkey, k.confkey) as pair(attnum, referenced_attnum)
      join pg_attribute a on a.attrelid = t.oid and a.attnum = pair.attnum
      join pg_attribute ra on ra.attrelid = r.oid and ra.attnum = pair.referenced_attnum
    where k.contype = 'f' and n.nspname = current_schema() and not t.relispartition
    order by 1, 2`)
  return rowsOf<{ table: string; column: string; referenced: string; referenced_column: string }>(result).map(
    (row) => ({
      table: row.table,
      column: row.column,
      referenced: row.referenced,
      referencedColumn: row.referenced_column,
    }),
  )
}

/** The account and every account below it (`parent_account`, at any depth), the account first. */
export async function listAccountFamily(db: Database, accountId: string): Promise<string[]> {
  const result = await db.execute(sql`
    with recursive family(id, depth) as (
      select id, 0 from accounts where id = ${accountId}
      union
      select a.id, f.depth + 1 from accounts a join family f on a.parent_account = f.id
    )
    select id from family order by depth, id`)
  return rowsOf<{ id: string }>(result).map((row) => row.id)
}

/**
 * Which rows of a table belong to the accounts: those whose `column` holds one of the account ids, or,
 * with `referencedBy`, whose `column` is referenced by a row of one of those tables that carries one of
 * the account ids in its `account_id` (a user is reached through the account's memberships).
 */
export interface Ownership {
  column: string
  referencedBy?: { table: string; column: string }[]
}

/** The condition selecting the rows of a table that `ownership` gives to the accounts. */
export function ownedRows(ownership: Ownership, accountIds: string[]): SQL {
  const ids = sql`(${list(accountIds.map((id) => sql`${id}`))})`
  const column = sql.identifier(ownership.column)
  if (!ownership.referencedBy) return sql`${column} in ${ids}`
  const references = ownership.referencedBy.map(
    (reference) =>
      sql`select ${sql.identifier(reference.column)} from ${sql.identifier(reference.table)} where account_id in ${ids}`,
  )
  return sql`${column} in (${sql.join(references, sql` union `)})`
}
