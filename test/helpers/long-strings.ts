import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Database } from '../../src/platform/db/connection.js'
import { rowsOf } from './jobs.js'
import {
  baseInput,
  bodySchemaOf,
  type Input,
  isObject,
  type Operation,
  type Schema,
  sample,
  typeOf,
  variantOf,
} from './openapi-inputs.js'

/** The length of the long value every string field of every operation is tried with. */
export const MEGABYTE = 1_000_000
/** Characters of four UTF-8 bytes each, up to the field's maxLength: 2,000 of them pass any btree index row. */
const AT_LIMIT_CHARACTERS = 2_000

const LETTERS_AND_DIGITS = 'abcdefghijklmnopqrstuvwxyz0123456789'

/**
 * Random text, which no compression shrinks: PostgreSQL compresses an index entry before measuring it, and
 * `'x'.repeat(20_000)` fits an index compressed while a user's 3,000 random characters do not.
 */
export function randomText(length: number, alphabet = LETTERS_AND_DIGITS): string {
  const bytes = randomBytes(length)
  let text = ''
  for (const byte of bytes) text += alphabet[byte % alphabet.length]
  return text
}

/**
 * `length` random CJK ideographs of the supplementary plane, four bytes each in UTF-8: the most bytes a
 * field of that many characters can hold.
 */
export function fourByteText(length: number): string {
  return Array.from(randomBytes(length), (byte, i) =>
    String.fromCodePoint(0x20000 + byte * 64 + (i % 64)),
  ).join('')
}

/** A random address of 254 characters (EMAIL_MAX_LENGTH): a local part of 64, DNS labels of 63 at most. */
export const longestEmail = () =>
  `${randomText(64)}@${randomText(63)}.${randomText(63)}.${randomText(57)}.com`

const LONG_TEXT = randomText(MEGABYTE)
const LONG_DIGITS = randomText(MEGABYTE, '0123456789')
const AT_LIMIT_TEXT = [...fourByteText(AT_LIMIT_CHARACTERS)]

/**
 * A `length`-character value of the string schema's shape (an email, a URL, text its pattern takes), or
 * undefined where the schema itself bounds the value: an enum, a date, a pattern no long text matches.
 */
function longValueFor(schema: Schema, length: number): string | undefined {
  if (schema.enum || schema.const !== undefined || schema.format === 'date' || schema.format === 'date-time')
    return undefined
  if (schema.format === 'email') return `${LONG_TEXT.slice(0, length - 12)}@example.com`
  if (schema.format === 'uri' || schema.format === 'url')
    return `https://example.com/${LONG_TEXT.slice(0, length - 20)}`
  const candidates = [LONG_TEXT.slice(0, length), LONG_DIGITS.slice(0, length)]
  if (!schema.pattern) return candidates[0]
  const pattern = new RegExp(schema.pattern, 'u')
  return candidates.find((candidate) => pattern.test(candidate))
}

/** The most four-byte characters a plain string field takes (its maxLength, up to 2,000), or undefined. */
function atLimitValueFor(schema: Schema): string | undefined {
  if (schema.maxLength === undefined || schema.format || schema.pattern || schema.enum) return undefined
  return AT_LIMIT_TEXT.slice(0, Math.min(schema.maxLength, AT_LIMIT_CHARACTERS)).join('')
}

type Segment = string | number
/** Where in the sampled body a string field sits, and its schema. */
interface StringField {
  at: Segment[]
  schema: Schema
}

/** The string fields of a sampled value, nested ones included (the first item of an array). */
function stringFields(schema: Schema | undefined, value: unknown, at: Segment[] = []): StringField[] {
  if (!schema || at.length > 8) return []
  const variant = variantOf(schema)
  if (variant) return stringFields(variant, value, at)
  const type = typeOf(schema)
  if (type === 'string' && typeof value === 'string') return [{ at, schema }]
  if (type === 'array' && Array.isArray(value)) return stringFields(schema.items, value[0], [...at, 0])
  if (!isObject(value)) return []
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) =>
    stringFields(property, value[name], [...at, name]),
  )
}

function withValueAt(value: unknown, at: Segment[], replacement: string): unknown {
  const [head, ...rest] = at
  if (head === undefined) return replacement
  if (Array.isArray(value))
    return value.map((item, i) => (i === head ? withValueAt(item, rest, replacement) : item))
  if (isObject(value)) return { ...value, [head]: withValueAt(value[head], rest, replacement) }
  return value
}

const fieldLabel = (at: Segment[]) =>
  at.reduce<string>(
    (label, s) => (typeof s === 'number' ? `${label}[${s}]` : label ? `${label}.${s}` : s),
    '',
  )

/** Ids the sampled input should name so that a call reaches storage: the fixture's account and user. */
export interface KnownIds {
  accountId: string
  userId: string
}

/** The sampled input, with the fixture's ids where a path or a body names an account or a user. */
function reachableInput(path: string, operation: Operation, ids: KnownIds) {
  const input = baseInput(operation)
  for (const name of Object.keys(input.path)) {
    if (path.includes(`/accounts/{${name}}`)) input.path[name] = ids.accountId
    if (path.includes(`/users/{${name}}`)) input.path[name] = ids.userId
  }
  const body = bodySchemaOf(operation)
  const sampled = body && sample(body.schema)
  if (isObject(sampled)) {
    if ('account_id' in sampled) sampled.account_id = ids.accountId
    if ('user_id' in sampled) sampled.user_id = ids.userId
  }
  return { input, body, sampled }
}

/** A body as its content type carries it: JSON, or a form of its top-level fields. */
function encoded(body: unknown, contentType: string): string {
  if (contentType === 'application/json') return JSON.stringify(body)
  return new URLSearchParams(
    Object.entries(body as object).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString()
}

export interface LongStringVariant {
  /** The field, as a 400 that refuses it names it. */
  field: string
  label: string
  input: Input
}

/**
 * The operation's sampled input (`base`), and `variants` of it with one string field at a time (a path, query
 * or header parameter, a body field at any depth) a megabyte long, then, for a field with a maxLength, as
 * many four-byte characters as it takes.
 */
export function longStringVariants(path: string, operation: Operation, ids: KnownIds) {
  const { input, body, sampled } = reachableInput(path, operation, ids)
  const base: Input = body
    ? { ...input, raw: encoded(sampled, body.contentType), contentType: body.contentType }
    : input
  const variants: LongStringVariant[] = []
  const values = (schema: Schema) =>
    [
      { size: '1 MB', value: longValueFor(schema, MEGABYTE) },
      { size: `${schema.maxLength} four-byte characters`, value: atLimitValueFor(schema) },
    ].filter((v): v is { size: string; value: string } => v.value !== undefined)

  for (const parameter of operation.parameters ?? []) {
    const { schema } = parameter
    const place = parameter.in as 'path' | 'query' | 'header'
    if (schema?.type !== 'string' || !['path', 'query', 'header'].includes(place)) continue
    for (const { size, value } of values(schema)) {
      const label = `${place} ${parameter.name} of ${size}`
      const changed = { ...(place === 'header' ? base.headers : base[place]), [parameter.name]: value }
      variants.push({
        field: parameter.name,
        label,
        input: { ...base, [place === 'header' ? 'headers' : place]: changed },
      })
    }
  }
  if (!body) return { base, variants }
  for (const { at, schema } of stringFields(body.schema, sampled)) {
    const field = String(at.findLast((segment) => typeof segment === 'string'))
    for (const { size, value } of values(schema)) {
      const raw = encoded(withValueAt(sampled, at, value), body.contentType)
      variants.push({ field, label: `body.${fieldLabel(at)} of ${size}`, input: { ...base, raw } })
    }
  }
  return { base, variants }
}

/**
 * A counter of the rows each table of the service holds, to show that a refused call left nothing behind;
 * the tables are listed once, when it is made.
 */
export async function rowCounter(db: Database): Promise<() => Promise<Record<string, number>>> {
  const tables = rowsOf<{ table_name: string }>(
    await db.execute(
      sql`select table_name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like '%drizzle%'`,
    ),
  )
  const counts = sql.join(
    tables.map(
      ({ table_name }) =>
        sql`select ${table_name} as name, count(*)::int as rows from ${sql.identifier(table_name)}`,
    ),
    sql` union all `,
  )
  return async () => {
    const rows = rowsOf<{ name: string; rows: number }>(await db.execute(counts))
    return Object.fromEntries(rows.map(({ name, rows }) => [name, rows]))
  }
}
