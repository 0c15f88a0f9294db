import {
  type AnyColumn,
  and,
  count,
  desc,
  eq,
  getTableColumns,
  ilike,
  inArray,
  lt,
  or,
  type SQL,
  sql,
} from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { newId } from '../../platform/db/ids.js'
import { insertOrReadBack } from '../../platform/db/insert-or-find.js'
import {
  isCursorWindow,
  keysetList,
  LIST_TOTAL_CAP,
  type ListPage,
  type ListWindow,
  placeField,
  selectListPage,
} from '../../platform/db/page.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { containsPattern } from '../../platform/db/search.js'
import { businesses, contacts, instareports, instasites, persons } from './tables.js'

export type ContactRow = typeof contacts.$inferSelect

export async function insertContact(
  db: Database,
  accountId: string,
  values: Omit<typeof contacts.$inferInsert, 'accountId'>,
): Promise<ContactRow | undefined> {
  const [row] = await db
    .insert(contacts)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning()
  return row
}

const value = (name: string) => sql.placeholder(name)

/** A contact as raw prepared statements answer it: columns as PostgreSQL names them, times as epoch ms. */
interface RawContact {
  id: string
  account_id: string
  email: string | null
  name: string
  phone: string
  created_ms: number
  updated_ms: number
}
const rawContactColumns = sql.raw(`id, account_id, email, name, phone,
  (extract(epoch from created_at) * 1000)::float8 as created_ms,
  (extract(epoch from updated_at) * 1000)::float8 as updated_ms`)
const contactOf = (raw: RawContact): ContactRow => ({
  id: raw.id,
  accountId: raw.account_id,
  email: raw.email,
  name: raw.name,
  phone: raw.phone,
  createdAt: new Date(raw.created_ms),
  updatedAt: new Date(raw.updated_ms),
})

// Inbound mail and form submissions create or find a contact in their transaction on every call: raw
// prepared statements, built once (a Drizzle prepared query is bound to the transaction that made it).
const insertNewContact = preparedStatement<RawContact>(
  'contacts_insert_new',
  sql`insert into ${contacts} (id, account_id, email, name, phone)
    values (${value('id')}, ${value('accountId')}, ${value('email')}, ${value('name')}, ${value('phone')})
    on conflict do nothing
    returning ${rawContactColumns}`,
)
const contactWithEmail = preparedStatement<RawContact>(
  'contacts_with_email',
  sql`select ${rawContactColumns} from ${contacts}
    where account_id = ${value('accountId')} and lower(email) = lower(${value('email')})`,
)

/** Creates the contact with this email, or finds the account's contact that has it (in any case). */
export async function insertOrFindContactByEmail(
  db: Database,
  accountId: string,
  values: { email: string; name: string; phone?: string },
): Promise<{ row: ContactRow; created: boolean }> {
  const contact = { ...values, phone: values.phone ?? '', accountId }
  const { row, created } = await insertOrReadBack(
    () => insertNewContact(db, { ...contact, id: newId() }),
    () => contactWithEmail(db, contact),
    'contacts',
  )
  return { row: contactOf(row), created }
}

export async function findContact(
  db: Database,
  accountId: string,
  contactId: string,
  options: { forUpdate?: boolean } = {},
) {
  const query = db
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.id, contactId)))
  const [row] = await (options.forUpdate ? query.for('update') : query)
  return row
}

/** The account's oldest contact with exactly this phone (phones are not unique: the first one is kept). */
export async function findContactByPhone(db: Database, accountId: string, phone: string) {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.phone, phone)))
    .orderBy(contacts.id)
    .limit(1)
  return row
}

/** Undefined when another contact of the account has the email (its unique index refused the write). */
export async function updateContactRow(
  db: Database,
  accountId: string,
  contactId: string,
  changes: Partial<Pick<ContactRow, 'email' | 'name' | 'phone'>>,
): Promise<ContactRow | undefined> {
  try {
    const [row] = await db
      .update(contacts)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(contacts.accountId, accountId), eq(contacts.id, contactId)))
      .returning()
    return row
  } catch (error) {
    if (isUniqueViolation(error)) return undefined
    throw error
  }
}

/** The account's contacts having one of the ids or (case-insensitively) one of the emails. */
export function findContactsByIdsOrEmails(
  db: Database,
  accountId: string,
  ids: string[],
  emails: string[],
): Promise<ContactRow[]> {
  const matches: SQL[] = []
  if (ids.length > 0) matches.push(inArray(contacts.id, ids))
  if (emails.length > 0) {
    matches.push(
      inArray(
        sql`lower(${contacts.email})`,
        emails.map((email) => email.toLowerCase()),
      ),
    )
  }
  if (matches.length === 0) return Promise.resolve([])
  return db
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), or(...matches)))
}

/** The account's contacts, newest first (by id, which starts with its time). */
export const contactsList = keysetList('contacts', contacts.id, contacts.id)

/** A term has contact search keys (`contact_search_keys`) from three characters on; shorter, short keys. */
const SEARCH_KEY_LENGTH = 3

/**
 * How many of the account's newest contacts a search reads by id before it turns to its keys, when the term
 * is common (held by half of the newest SEARCH_PROBE contacts): enough to find a page, or a capped total
 * (LIST_TOTAL_CAP + 1), of a term that half the contacts hold, so that a common term costs the same in an
 * account of a thousand contacts as in one of a hundred thousand (docs/decisions.md, "Searches whose cost
 * does not grow with the account").
 */
export const SEARCH_WALK = 2 * (LIST_TOTAL_CAP + 1)

/**
 * How many of the account's newest contacts a search reads first: a rarer term then finds the older ones by
 * its keys, where it has few, without walking SEARCH_WALK contacts for them.
 */
export const SEARCH_PROBE = 200

/** Whether the contact's name or email holds `search` (ILIKE, its wildcards taken literally). */
const holdsTerm = (search: string): SQL =>
  or(ilike(contacts.name, containsPattern(search)), ilike(contacts.email, containsPattern(search))) as SQL

/**
 * The contacts of the account having the keys of `search`, or the long-text key: from three characters on,
 * the GIN index `contacts_account_search_keys` (every three characters of the lowercased name and email,
 * `contact_search_keys`); below, `contacts_account_short_search_keys` (every one and two characters,
 * `contact_short_search_keys`). The long-text key marks a name or email over 200 characters, keyed on its
 * first 200 only. The account is a parameter, not the column, so that PostgreSQL computes the term's keys
 * once, when it plans.
 */
function havingKeys(accountId: string, search: string): SQL {
  const short = [...search].length < SEARCH_KEY_LENGTH
  const keysOf = sql.raw(short ? 'contact_short_search_keys' : 'contact_search_keys')
  const keys = sql`${keysOf}(${contacts.accountId}, ${contacts.name}, ${contacts.email})`
  return sql`(${keys} @> ${keysOf}(${accountId}::text, ${search}::text)
    or ${keys} @> contact_search_long_text_key(${accountId}::text))`
}

/** The account's contacts, after `before` (an id) when given, newest first. */
const ofAccount = (accountId: string, before: string | null) =>
  before ? and(eq(contacts.accountId, accountId), lt(contacts.id, before)) : eq(contacts.accountId, accountId)

/**
 * A search of the account's contacts, newest first, after the contact `after` (none: from the newest). It
 * reads the newest SEARCH_PROBE contacts by id (`contacts_pkey`: account, id); when half of them hold the term,
 * it walks on to SEARCH_WALK, where a common term finds what it needs. Only when the walk holds too few matches
 * does it look up the older contacts by the term's keys, which then have few. Each read stops at what it
 * needs, so neither a term every contact holds nor one none holds reads the account's every contact.
 */
class ContactSearch {
  /** How many contacts the walk reads: SEARCH_PROBE, or SEARCH_WALK for a common term. */
  #walkLength: Promise<number> | undefined
  /** The id of the last contact of the walk (the oldest it reads), null when it reaches the account's end. */
  #walkEnd: Promise<string | null> | undefined

  constructor(
    private readonly db: Database,
    private readonly accountId: string,
    private readonly search: string,
    private readonly after: string | null,
  ) {}

  /** The newest `length` contacts after `after`: a subquery read by id, stopping where its reader does. */
  #walk(length: number) {
    return this.db
      .select(getTableColumns(contacts))
      .from(contacts)
      .where(ofAccount(this.accountId, this.after))
      .orderBy(desc(contacts.id))
      .limit(length)
      .as('walk')
  }

  /** The walk's contacts that hold the term. */
  #holding(walk: { name: AnyColumn; email: AnyColumn }) {
    const pattern = containsPattern(this.search)
    return or(ilike(walk.name, pattern), ilike(walk.email, pattern))
  }

  /** SEARCH_WALK when at least half of the newest SEARCH_PROBE contacts hold the term, else SEARCH_PROBE. */
  #length(): Promise<number> {
    this.#walkLength ??= (async () => {
      const probe = this.#walk(SEARCH_PROBE)
      const [read] = await this.db
        .select({ contacts: count(), holding: count(sql`case when ${this.#holding(probe)} then 1 end`) })
        .from(probe)
      const common = read !== undefined && read.contacts === SEARCH_PROBE && 2 * read.holding >= read.contacts
      return common ? SEARCH_WALK : SEARCH_PROBE
    })()
    return this.#walkLength
  }

  /** The contacts older than the walk that match, by the term's keys (undefined: the walk read them all). */
  async #olderMatching(): Promise<SQL | undefined> {
    this.#walkEnd ??= this.#length().then((length) =>
      this.db
        .select({ id: contacts.id })
        .from(contacts)
        .where(ofAccount(this.accountId, this.after))
        .orderBy(desc(contacts.id))
        .offset(length - 1)
        .limit(1)
        .then(([row]) => row?.id ?? null),
    )
    const end = await this.#walkEnd
    if (end === null) return undefined
    return and(
      ofAccount(this.accountId, end),
      havingKeys(this.accountId, this.search),
      holdsTerm(this.search),
    )
  }

  /** The first `count` matches, newest first. */
  async rows(count: number): Promise<(ContactRow & { listPlace: string })[]> {
    const walk = this.#walk(await this.#length())
    const walked = await this.db
      .select()
      .from(walk)
      .where(this.#holding(walk))
      .orderBy(desc(walk.id))
      .limit(count)
    const rows = walked.map((row) => ({ ...row, listPlace: row.id }))
    if (rows.length === count) return rows
    const older = await this.#olderMatching()
    if (!older) return rows
    const more = await this.db
      .select({ ...getTableColumns(contacts), ...placeField(contactsList) })
      .from(contacts)
      .where(older)
      .orderBy(desc(contacts.id))
      .limit(count - rows.length)
    return [...rows, ...more]
  }

  /** How many contacts match, counted up to LIST_TOTAL_CAP + 1. */
  async total(): Promise<number> {
    const walk = this.#walk(await this.#length())
    const matching = this.db
      .select({ one: sql`1` })
      .from(walk)
      .where(this.#holding(walk))
      .limit(LIST_TOTAL_CAP + 1)
      .as('matching')
    const [walked] = await this.db.select({ total: count() }).from(matching)
    const found = walked?.total ?? 0
    if (found > LIST_TOTAL_CAP) return found
    const older = await this.#olderMatching()
    if (!older) return found
    const olderMatching = this.db
      .select({ one: sql`1` })
      .from(contacts)
      .where(older)
      .limit(LIST_TOTAL_CAP + 1 - found)
      .as('older_matching')
    const [more] = await this.db.select({ total: count() }).from(olderMatching)
    return found + (more?.total ?? 0)
  }
}

/** One page of the account's contacts matching `search` in name or email, newest first. */
async function searchContacts(
  db: Database,
  accountId: string,
  search: string,
  window: ListWindow,
): Promise<ListPage<ContactRow & { listPlace: string }>> {
  if (isCursorWindow(window)) {
    const rows = await new ContactSearch(db, accountId, search, window.after?.id ?? null).rows(
      window.limit + 1,
    )
    const page = rows.slice(0, window.limit)
    const last = page.at(-1)
    return { rows: page, next: rows.length > window.limit && last ? { key: last.id, id: last.id } : null }
  }
  const contactSearch = new ContactSearch(db, accountId, search, null)
  const [rows, total] = await Promise.all([
    contactSearch.rows(window.offset + window.limit),
    contactSearch.total(),
  ])
  const page = rows.slice(window.offset)
  const last = page.at(-1)
  return {
    rows: page,
    total,
    next: page.length === window.limit && last ? { key: last.id, id: last.id } : null,
  }
}

/** One page of the account's contacts, newest first, optionally matching `search` in name or email. */
export async function listContacts(db: Database, accountId: string, page: { search?: string } & ListWindow) {
  if (page.search) return searchContacts(db, accountId, page.search, page)
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(contacts), ...placeField(contactsList) })
      .from(contacts)
      .$dynamic(),
    { ...contactsList, from: contacts, where: eq(contacts.accountId, accountId) },
    page,
  )
}

/** The account-owned records that email variables read, by the name the admin API uses. */
export const variableSources = { persons, businesses, instasites, instareports }
export type VariableSource = keyof typeof variableSources
export type VariableSourceRow<K extends VariableSource> = (typeof variableSources)[K]['$inferSelect']
type VariableSourceInsert<K extends VariableSource> = Omit<
  (typeof variableSources)[K]['$inferInsert'],
  'accountId'
>

export async function insertVariableSource<K extends VariableSource>(
  db: Database,
  accountId: string,
  kind: K,
  values: VariableSourceInsert<K>,
): Promise<VariableSourceRow<K>> {
  const table = variableSources[kind]
  const [row] = await db
    .insert(table)
    .values({ ...values, accountId } as never)
    .returning()
  return row as VariableSourceRow<K>
}

export async function findVariableSource<K extends VariableSource>(
  db: Database,
  accountId: string,
  kind: K,
  id: string,
): Promise<VariableSourceRow<K> | undefined> {
  const table = variableSources[kind]
  const [row] = await db
    .select()
    .from(table as typeof persons)
    .where(and(eq(table.accountId, accountId), eq(table.id, id)))
  return row as VariableSourceRow<K> | undefined
}
