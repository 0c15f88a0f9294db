import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import {
  type ContactRow,
  findContact,
  findContactsByIdsOrEmails,
  findVariableSource,
  insertContact,
  insertVariableSource,
  listContacts,
  type VariableSource,
  type VariableSourceRow,
} from './contacts.repository.js'
import { requireAccount } from './service.js'

export interface ContactView {
  _id: string
  account_id: string
  email: string | null
  name: string
  phone: string
  created_at: string
  updated_at: string
}

const contactView = (row: ContactRow): ContactView => ({
  _id: row.id,
  account_id: row.accountId,
  email: row.email,
  name: row.name,
  phone: row.phone,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

export async function createContact(
  db: Database,
  accountId: string,
  input: { email?: string; name?: string; phone?: string },
): Promise<ContactView> {
  await requireAccount(db, accountId)
  const row = await insertContact(db, accountId, {
    email: input.email?.trim(),
    name: input.name,
    phone: input.phone,
  })
  if (!row) throw new Conflict('A contact with this email already exists in the account')
  return contactView(row)
}

export async function getContact(db: Database, accountId: string, contactId: string): Promise<ContactView> {
  const row = await findContact(db, accountId, contactId)
  if (!row) throw new NotFound('Contact not found')
  return contactView(row)
}

/**
 * The contacts of the given recipients, found by `recipient_id` (a contact of this account) or else by
 * email, each contact once, in recipient order.
 */
export async function findRecipientContacts(
  db: Database,
  accountId: string,
  recipients: { email: string; recipient_id?: string }[],
): Promise<ContactView[]> {
  const ids = recipients.flatMap((r) => (r.recipient_id ? [r.recipient_id] : []))
  const rows = await findContactsByIdsOrEmails(
    db,
    accountId,
    ids,
    recipients.map((r) => r.email),
  )
  const found: ContactRow[] = []
  for (const recipient of recipients) {
    const contact =
      rows.find((row) => row.id === recipient.recipient_id) ??
      rows.find((row) => row.email?.toLowerCase() === recipient.email.toLowerCase())
    if (contact && !found.includes(contact)) found.push(contact)
  }
  return found.map(contactView)
}

export function listContactsPage(
  db: Database,
  accountId: string,
  query: { search?: string; page: number; limit: number },
): Promise<{ data: ContactView[]; pagination: Pagination }> {
  return paginate(
    query,
    (window) => listContacts(db, accountId, { search: query.search, ...window }),
    contactView,
  )
}

export type VariableSourceView = Record<string, unknown> & {
  _id: string
  account_id: string
  created_at: string
  updated_at: string
}

function variableSourceView(row: VariableSourceRow<VariableSource>): VariableSourceView {
  const { id, accountId, createdAt, updatedAt, ...fields } = row
  const snake = Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [
      key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      value,
    ]),
  )
  return {
    _id: id,
    account_id: accountId,
    ...snake,
    created_at: createdAt.toISOString(),
    updated_at: updatedAt.toISOString(),
  }
}

/** Creates a person, business, instasite or instareport: the records email variables read. */
export async function createVariableSource(
  db: Database,
  accountId: string,
  kind: VariableSource,
  fields: Record<string, string>,
): Promise<VariableSourceView> {
  await requireAccount(db, accountId)
  const camel = Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [
      key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      value,
    ]),
  )
  return variableSourceView(await insertVariableSource(db, accountId, kind, camel as never))
}

export async function getVariableSource(
  db: Database,
  accountId: string,
  kind: VariableSource,
  id: string,
): Promise<VariableSourceView | null> {
  const row = await findVariableSource(db, accountId, kind, id)
  return row ? variableSourceView(row) : null
}

/**
 * The account's contact with this email (case-insensitive), created with `name` when there is none;
 * a concurrent creation of the same contact is read back rather than duplicated.
 */
export async function findOrCreateContactByEmail(
  db: Database,
  accountId: string,
  input: { email: string; name?: string },
): Promise<ContactView & { created: boolean }> {
  const email = input.email.trim()
  const [existing] = await findContactsByIdsOrEmails(db, accountId, [], [email])
  if (existing) return { ...contactView(existing), created: false }
  const inserted = await insertContact(db, accountId, { email, name: input.name ?? '' })
  if (inserted) return { ...contactView(inserted), created: true }
  const [raced] = await findContactsByIdsOrEmails(db, accountId, [], [email])
  if (!raced) throw new Error('contact neither inserted nor found')
  return { ...contactView(raced), created: false }
}
