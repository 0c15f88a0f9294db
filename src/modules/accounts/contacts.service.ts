import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Changes } from '../../platform/events/changes.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import { requireChangeableAccount } from './accounts.service.js'
import {
  type ContactRow,
  contactsList,
  findContact,
  findContactByPhone,
  findContactsByIdsOrEmails,
  findVariableSource,
  insertContact,
  insertOrFindContactByEmail,
  insertVariableSource,
  listContacts,
  updateContactRow,
  type VariableSource,
  type VariableSourceRow,
} from './contacts.repository.js'
import type { Contact, VariableSourceRecord } from './contacts.schemas.js'

const contactView = (row: ContactRow): Contact => ({
  _id: row.id,
  account_id: row.accountId,
  email: row.email,
  name: row.name,
  phone: row.phone,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

export interface ContactInput {
  email?: string
  name?: string
  phone?: string
}

const DUPLICATE_EMAIL = 'A contact with this email already exists in the account'

/** Third-party apps need `crm.contacts.read` to read contacts and `crm.contacts.write` to change them. */
export const CRM_CONTACTS_READ = { oauthScope: 'crm.contacts.read' } as const
export const CRM_CONTACTS_WRITE = { oauthScope: 'crm.contacts.write' } as const

/** Announced with the contact's view, so that apps authorized in the account hear of it. */
export const CONTACT_CREATED = 'contact.created'
export const CONTACT_UPDATED = 'contact.updated'

export async function createContact(
  db: Database,
  changes: Changes,
  accountId: string,
  input: ContactInput,
): Promise<Contact> {
  await requireChangeableAccount(db, accountId)
  return inTransaction(db, async (tx) => {
    const row = await insertContact(tx, accountId, {
      email: input.email?.trim(),
      name: input.name,
      phone: input.phone,
    })
    if (!row) throw new Conflict(DUPLICATE_EMAIL)
    const view = contactView(row)
    await changes.announce(tx, accountId, CONTACT_CREATED, view)
    return view
  })
}

/** Changes the given fields; a change that alters nothing is not announced. */
export async function updateContact(
  db: Database,
  changes: Changes,
  accountId: string,
  contactId: string,
  input: ContactInput,
): Promise<Contact> {
  return inTransaction(db, async (tx) => {
    const before = await findContact(tx, accountId, contactId, { forUpdate: true })
    if (!before) throw new NotFound('Contact not found')
    const wanted = {
      ...(input.email !== undefined && { email: input.email.trim() }),
      ...(input.name !== undefined && { name: input.name }),
      ...(input.phone !== undefined && { phone: input.phone }),
    }
    const altered = Object.entries(wanted).some(
      ([key, value]) => before[key as keyof typeof wanted] !== value,
    )
    if (!altered) return contactView(before)
    const row = await updateContactRow(tx, accountId, contactId, wanted)
    if (!row) throw new Conflict(DUPLICATE_EMAIL)
    const view = contactView(row)
    await changes.announce(tx, accountId, CONTACT_UPDATED, view)
    return view
  })
}

export async function getContact(db: Database, accountId: string, contactId: string): Promise<Contact> {
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
): Promise<Contact[]> {
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
  query: { search?: string; page: number; limit: number; cursor?: string },
): Promise<{ data: Contact[]; pagination: Pagination | CursorPagination }> {
  return paginateList(
    contactsList,
    query,
    (window) => listContacts(db, accountId, { search: query.search, ...window }),
    contactView,
  )
}

function variableSourceView(row: VariableSourceRow<VariableSource>): VariableSourceRecord {
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
): Promise<VariableSourceRecord> {
  await requireChangeableAccount(db, accountId)
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
): Promise<VariableSourceRecord | null> {
  const row = await findVariableSource(db, accountId, kind, id)
  return row ? variableSourceView(row) : null
}

/**
 * The account's contact with this email (case-insensitive), created with `name` when there is none;
 * a concurrent creation of the same contact is read back rather than duplicated.
 */
export async function findOrCreateContactByEmail(
  tx: Database,
  changes: Changes,
  accountId: string,
  input: { email: string; name?: string },
): Promise<Contact & { created: boolean }> {
  const email = input.email.trim()
  const [existing] = await findContactsByIdsOrEmails(tx, accountId, [], [email])
  if (existing) return { ...contactView(existing), created: false }
  const { row, created } = await insertOrFindContactByEmail(tx, accountId, { email, name: input.name ?? '' })
  const view = contactView(row)
  if (created) await changes.announce(tx, accountId, CONTACT_CREATED, view)
  return { ...view, created }
}

/**
 * A person who reached the account through another source (a funnel's form): the account's contact with
 * this email (in any case) or, without an email, this phone is given the name and phone sent when they
 * differ (`contact.updated`); with none, one is created (`contact.created`). Runs in the caller's
 * transaction, so the contact and its announcement commit with the caller's own record or not at all.
 */
export async function saveContactFromSource(
  tx: Database,
  changes: Changes,
  accountId: string,
  input: ContactInput & ({ email: string } | { phone: string }),
): Promise<Contact & { created: boolean }> {
  const email = input.email?.trim() || undefined
  const name = input.name?.trim() || undefined
  const phone = input.phone?.trim() || undefined
  let existing: ContactRow | undefined
  let created: ContactRow | undefined
  if (email) {
    const found = await insertOrFindContactByEmail(tx, accountId, { email, name: name ?? '', phone })
    if (found.created) created = found.row
    else existing = found.row
  } else if (phone) {
    existing = await findContactByPhone(tx, accountId, phone)
    if (!existing) created = await insertContact(tx, accountId, { name, phone })
  }
  if (created) {
    const view = contactView(created)
    await changes.announce(tx, accountId, CONTACT_CREATED, view)
    return { ...view, created: true }
  }
  if (!existing) throw new Error('saveContactFromSource needs an email or a phone')
  const wanted = {
    ...(name !== undefined && name !== existing.name && { name }),
    ...(phone !== undefined && phone !== existing.phone && { phone }),
  }
  if (Object.keys(wanted).length === 0) return { ...contactView(existing), created: false }
  const row = await updateContactRow(tx, accountId, existing.id, wanted)
  // Deleted meanwhile: nothing was changed, so nothing is announced.
  if (!row) return { ...contactView(existing), created: false }
  const view = contactView(row)
  await changes.announce(tx, accountId, CONTACT_UPDATED, view)
  return { ...view, created: false }
}
