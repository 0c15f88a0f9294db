import { and, eq, getTableColumns, ilike, inArray, or, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { newId } from '../../platform/db/ids.js'
import { insertOrReadBack } from '../../platform/db/insert-or-find.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
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

/** A term has contact search keys (`contact_search_keys`) from three characters on. */
const SEARCH_KEY_LENGTH = 3

/**
 * Contacts of the account whose name or email holds `search`. From three characters on, the search keys of
 * the term come first: the GIN index `contacts_account_search_keys` finds the contacts having them all, or
 * the long-text key (a name or email over 200 characters, keyed on its first 200 only), and ILIKE keeps
 * those that hold the term itself. The account is a parameter, not the column, so that PostgreSQL computes
 * the term's keys once, when it plans.
 */
function matchingSearch(accountId: string, search: string): SQL {
  const pattern = containsPattern(search)
  const holdsTerm = or(ilike(contacts.name, pattern), ilike(contacts.email, pattern)) as SQL
  if ([...search].length < SEARCH_KEY_LENGTH) return holdsTerm
  const keys = sql`contact_search_keys(${contacts.accountId}, ${contacts.name}, ${contacts.email})`
  const hasKeys = sql`(${keys} @> contact_search_keys(${accountId}::text, ${search}::text)
    or ${keys} @> contact_search_long_text_key(${accountId}::text))`
  return and(hasKeys, holdsTerm) as SQL
}

/** One page of the account's contacts, newest first, optionally matching `search` in name or email. */
export async function listContacts(db: Database, accountId: string, page: { search?: string } & ListWindow) {
  const filters: SQL[] = [eq(contacts.accountId, accountId)]
  if (page.search) filters.push(matchingSearch(accountId, page.search))
  const where = and(...filters)
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(contacts), ...placeField(contactsList) })
      .from(contacts)
      .$dynamic(),
    { ...contactsList, from: contacts, where },
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
