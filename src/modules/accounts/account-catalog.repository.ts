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

/**
 * A unique index of the schema (a primary key's and a unique constraint's too). `columns` in key order; an
 * expression (`lower(name)`) is written as such, so `account_id` is found only as a column of its own.
 */
export interface CatalogUniqueIndex {
  table: string
  name: string
  primary: boolean
  columns: string[]
  /** Its WHERE, for a partial index; null when it covers every row. */
  predicate: string | null
}

/** Every unique index of the service's schema, from the catalog (`pg_index`), partitions' copies left out. */
export async function listCatalogUniqueIndexes(db: Database): Promise<CatalogUniqueIndex[]> {
  const result = await db.execute(sql`
    select t.relname::text as "table", ic.relname::text as name, i.indisprimary as primary,
      array(select case when k.attnum = 0 then pg_get_indexdef(i.indexrelid, k.position::int, true)
                        else (select a.attname::text from pg_attribute a
                              where a.attrelid = t.oid and a.attnum = k.attnum) end
            from unnest(i.indkey[0:i.indnkeyatts - 1]) with ordinality as k(attnum, position)
            order by k.position) as columns,
      pg_get_expr(i.indpred, i.indrelid) as predicate
    from pg_index i
      join pg_class t on t.oid = i.indrelid
      join pg_class ic on ic.oid = i.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
    where i.indisunique and n.nspname = current_schema() and t.relkind in ('r', 'p') and not t.relispartition
    order by 1, 2`)
  return rowsOf<{
    table: string
    name: string
    primary: boolean
    columns: string[]
    predicate: string | null
  }>(result)
}

/** A foreign key of the schema as one constraint: its columns and the referenced columns, pair by pair. */
export interface CatalogForeignKey {
  name: string
  table: string
  columns: string[]
  referenced: string
  referencedColumns: string[]
}

/** Every foreign key of the service's schema, one per constraint (listCatalogReferences has one per column). */
export async function listCatalogForeignKeys(db: Database): Promise<CatalogForeignKey[]> {
  const result = await db.execute(sql`
    select k.conname::text as name, t.relname::text as "table", r.relname::text as referenced,
      array(select a.attname::text from unnest(k.conkey) with ordinality as x(attnum, position)
              join pg_attribute a on a.attrelid = t.oid and a.attnum = x.attnum order by x.position) as columns,
      array(select a.attname::text from unnest(k.confkey) with ordinality as x(attnum, position)
              join pg_attribute a on a.attrelid = r.oid and a.attnum = x.attnum order by x.position)
        as referenced_columns
    from pg_constraint k
      join pg_class t on t.oid = k.conrelid
      join pg_class r on r.oid = k.confrelid
      join pg_namespace n on n.oid = t.relnamespace
    where k.contype = 'f' and n.nspname = current_schema() and not t.relispartition
    order by 2, 1`)
  return rowsOf<{
    name: string
    table: string
    referenced: string
    columns: string[]
    referenced_columns: string[]
  }>(result).map(({ referenced_columns, ...key }) => ({ ...key, referencedColumns: referenced_columns }))
}

/** The tables of the service's schema whose `account_id` may be null: rows attributed to no account yet. */
export async function listNullableAccountIdTables(db: Database): Promise<string[]> {
  const result = await db.execute(sql`
    select c.relname::text as name
    from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition and not a.attnotnull
    order by 1`)
  return rowsOf<{ name: string }>(result).map((row) => row.name)
}
