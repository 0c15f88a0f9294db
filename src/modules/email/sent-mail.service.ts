import type { Database } from '../../platform/db/connection.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import { type CommunicationEventRow, listEventsOfRecords } from './communications.repository.js'
import type { Communication, DeliveryEvent } from './communications.schemas.js'
import { getCommunication } from './communications.service.js'
import { deliveryStatus } from './delivery-status.service.js'
import { listSentMailLines, type SentMailLineRow, sentMailList } from './sent-mail.repository.js'
import { type AttachmentMetadata, MODULE_TAGS } from './tables.js'

/*
 * The mail every account sent, as the operator reads it (the outbox page, src/modules/outbox): a list across
 * accounts and one message whole. The page is another module's; what a sent message is stays here.
 */

/** A line of the sent-mail list. */
export interface SentMailLine {
  id: string
  accountId: string
  provider: string
  createdAt: Date
  from: string
  to: string[]
  subject: string
  status: string
  /** The delivery events' names, oldest first. */
  events: string[]
  attachmentCount: number
}

/** One sent email, as its page shows it. */
export interface SentMail {
  id: string
  accountId: string
  provider: string
  msgId: string | null
  createdAt: string
  from: string
  replyTo: string
  to: string[]
  cc: string[]
  bcc: string[]
  subject: string
  html: string | undefined
  text: string | undefined
  /** A message sent with a provider template has no content of its own: the template and its data. */
  template: { id: string; data: unknown } | undefined
  status: string
  events: DeliveryEvent[]
  attachments: AttachmentMetadata[]
}

// The provider request is jsonb, which the database does not check: every field is read defensively.
const field = (value: unknown, key: string): unknown =>
  value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined

const text = (value: unknown) => (typeof value === 'string' ? value : '')

function addressText(value: unknown): string {
  const email = text(field(value, 'email'))
  const name = text(field(value, 'name'))
  return name && email ? `${name} <${email}>` : email
}

/** The addresses of `kind` across the request's personalizations. */
function recipients(personalizations: unknown, kind: 'to' | 'cc' | 'bcc'): string[] {
  if (!Array.isArray(personalizations)) return []
  return personalizations.flatMap((each) => {
    const list = field(each, kind)
    return Array.isArray(list) ? list.map(addressText).filter(Boolean) : []
  })
}

function contentOf(body: Record<string, unknown>, type: string): string | undefined {
  const content = body.content
  if (!Array.isArray(content)) return undefined
  const part = content.find((each) => field(each, 'type') === type)
  return part === undefined ? undefined : text(field(part, 'value'))
}

/** The record's own fields when its sender set them (as inbound mail does), else the provider request's. */
const htmlOf = (record: Communication) => record.html ?? contentOf(record.body, 'text/html')

/** The newest delivery event; before any, what became of the message when it was sent. */
const statusOf = (provider: string, events: { event: string; timestamp: number }[]) =>
  deliveryStatus(events) ?? (provider === MODULE_TAGS.outbox ? 'kept in the outbox' : 'accepted')

/** The events of each record, each looked up in its own account. */
async function eventsByRecord(db: Database, rows: SentMailLineRow[]) {
  const byRecord = new Map<string | null, CommunicationEventRow[]>()
  for (const event of await listEventsOfRecords(db, rows))
    byRecord.set(event.communicationId, [...(byRecord.get(event.communicationId) ?? []), event])
  return byRecord
}

/**
 * The mail sent by every account (or `accountId`'s), newest first, with each message's events; by page, or
 * after a cursor (`nextCursor` reads on after the page).
 */
export function listSentMail(
  db: Database,
  query: { accountId?: string; page: number; limit: number; cursor?: string },
): Promise<{ data: SentMailLine[]; pagination: Pagination | CursorPagination; nextCursor: string | null }> {
  return paginateList(
    sentMailList,
    query,
    async (window) => {
      const { rows, ...page } = await listSentMailLines(db, { accountId: query.accountId, ...window })
      const events = await eventsByRecord(db, rows)
      return { ...page, rows: rows.map((row) => ({ row, events: events.get(row.id) ?? [] })) }
    },
    ({ row, events }) => ({
      id: row.id,
      accountId: row.accountId,
      provider: row.module,
      createdAt: row.createdAt,
      from: row.fromAddress ?? addressText(row.from),
      to: row.toAddresses ?? recipients(row.personalizations, 'to'),
      subject: text(row.subject),
      status: statusOf(row.module, events),
      events: events.map((event) => event.event),
      attachmentCount: row.attachmentCount,
    }),
  )
}

/** The account's sent record; a received one is not on this page. */
async function sentRecord(db: Database, accountId: string, id: string): Promise<Communication> {
  const record = await getCommunication(db, accountId, id)
  if (record.type !== 'OUTGOING') throw new NotFound('Communication not found')
  return record
}

export async function getSentMail(db: Database, accountId: string, id: string): Promise<SentMail> {
  const record = await sentRecord(db, accountId, id)
  const { body } = record
  const templateId = text(body.template_id)
  const personalizations = body.personalizations
  return {
    id: record._id,
    accountId: record.account_id,
    provider: record.module,
    msgId: record.msgID,
    createdAt: record.createdAt,
    from: record.from ?? addressText(body.from),
    replyTo: addressText(body.reply_to),
    to: record.to ?? recipients(personalizations, 'to'),
    cc: recipients(personalizations, 'cc'),
    bcc: recipients(personalizations, 'bcc'),
    subject: record.subject ?? text(body.subject),
    html: htmlOf(record),
    text: record.text ?? contentOf(body, 'text/plain'),
    template: templateId
      ? {
          id: templateId,
          data: Array.isArray(personalizations)
            ? field(personalizations[0], 'dynamic_template_data')
            : undefined,
        }
      : undefined,
    status: statusOf(record.module, record.events),
    events: record.events,
    attachments: record.attachments,
  }
}

/** The HTML part of a sent email, for the sandboxed frame of its page. */
export async function getSentMailHtml(db: Database, accountId: string, id: string): Promise<string> {
  const html = htmlOf(await sentRecord(db, accountId, id))
  if (html === undefined) throw new NotFound('The message has no HTML part')
  return html
}
