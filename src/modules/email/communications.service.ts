import type { Database } from '../../platform/db/connection.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import type { ObjectStorage } from '../../platform/storage/object-storage.js'
import {
  type CommunicationEventRow,
  type CommunicationFilters,
  type CommunicationRow,
  communicationsList,
  findCommunication,
  listCommunications,
  listEventsOf,
} from './communications.repository.js'
import type { Communication, DeliveryEvent } from './communications.schemas.js'
import { deliveryStatus } from './delivery-status.service.js'
import type { AttachmentMetadata, SentBy } from './tables.js'

const eventView = (row: CommunicationEventRow): DeliveryEvent => ({
  event: row.event,
  email: row.email,
  timestamp: row.timestamp,
  sg_event_id: row.sgEventId,
  sg_message_id: row.sgMessageId,
  account_id: row.accountId,
  uid: row.uid,
  useragent: row.useragent,
  ip: row.ip,
  url: row.url,
})

// jsonb is not checked by the database: every key the response schema requires is filled in here.
const sentByView = (sentBy: Partial<SentBy> | null): SentBy | null =>
  sentBy && {
    name: sentBy.name ?? '',
    email: sentBy.email ?? '',
    first_name: sentBy.first_name ?? '',
    last_name: sentBy.last_name ?? '',
    phone: sentBy.phone ?? '',
    image: sentBy.image ?? '',
  }

const attachmentView = (a: AttachmentMetadata): AttachmentMetadata => ({
  bucket: a.bucket,
  type: a.type,
  file_name: a.file_name,
  size: a.size,
  key: a.key,
})

/** The record with its events; the inbound-only fields appear only when they are set. */
export function communicationView(row: CommunicationRow, events: CommunicationEventRow[]): Communication {
  return {
    _id: row.id,
    sent_by: sentByView(row.sentBy),
    origin: row.origin,
    account_id: row.accountId,
    headers: row.headers,
    body: row.body,
    msgID: row.msgId,
    type: row.type,
    module: row.module,
    message_type: row.messageType,
    contact_id: row.contactIds,
    conversation_id: row.conversationIds,
    attachments: row.attachments.map(attachmentView),
    success: row.success,
    events: events.map(eventView),
    delivery_status: deliveryStatus(events),
    ...(row.fromAddress !== null && { from: row.fromAddress }),
    ...(row.toAddresses !== null && { to: row.toAddresses }),
    ...(row.subject !== null && { subject: row.subject }),
    ...(row.html !== null && { html: row.html }),
    ...(row.text !== null && { text: row.text }),
    ...(row.referenceId !== null && { referenceID: row.referenceId }),
    createdAt: row.createdAt.toISOString(),
    modifiedAt: row.modifiedAt.toISOString(),
  }
}

/** One page of the account's records with their events, fetched in one query for the whole page. */
export function listCommunicationsPage(
  db: Database,
  accountId: string,
  query: CommunicationFilters & { page: number; limit: number; cursor?: string },
): Promise<{ data: Communication[]; pagination: Pagination | CursorPagination }> {
  return paginateList(
    communicationsList,
    query,
    async (window) => {
      const { rows, ...page } = await listCommunications(db, accountId, { ...query, ...window })
      const events = await listEventsOf(
        db,
        accountId,
        rows.map((row) => row.id),
      )
      const byRecord = new Map<string | null, CommunicationEventRow[]>()
      for (const event of events) {
        const list = byRecord.get(event.communicationId)
        if (list) list.push(event)
        else byRecord.set(event.communicationId, [event])
      }
      return { ...page, rows: rows.map((row) => ({ row, events: byRecord.get(row.id) ?? [] })) }
    },
    ({ row, events }) => communicationView(row, events),
  )
}

export async function getCommunication(db: Database, accountId: string, id: string): Promise<Communication> {
  const row = await findCommunication(db, accountId, id)
  if (!row) throw new NotFound('Communication not found')
  return communicationView(row, await listEventsOf(db, accountId, [row.id]))
}

/** The bytes of the record's attachment at `index` (0-based, in the order of `attachments`). */
export async function readAttachment(
  db: Database,
  storage: ObjectStorage,
  accountId: string,
  id: string,
  index: number,
): Promise<{ metadata: AttachmentMetadata; bytes: Buffer }> {
  const row = await findCommunication(db, accountId, id)
  if (!row) throw new NotFound('Communication not found')
  const metadata = row.attachments[index]
  if (!metadata) throw new NotFound('Attachment not found')
  const bytes = await storage.get(metadata.key)
  if (!bytes) throw new NotFound('Attachment not found')
  return { metadata: attachmentView(metadata), bytes }
}

/**
 * Rule 6 of the send and step 8 of inbound replies: the files go to object storage under the record's
 * id; the record keeps only their metadata.
 */
export async function storeCommunicationAttachments(
  storage: ObjectStorage,
  accountId: string,
  communicationId: string,
  files: { filename: string; type: string; data: Buffer }[],
): Promise<AttachmentMetadata[]> {
  return Promise.all(
    files.map(async (file, i) => {
      const safeName = file.filename.replace(/[^\w.-]+/g, '_').slice(-100) || 'attachment'
      const stored = await storage.put(
        `accounts/${accountId}/communications/${communicationId}/${i}-${safeName}`,
        file.data,
        file.type,
      )
      return {
        bucket: stored.bucket,
        type: file.type,
        file_name: file.filename,
        size: stored.size,
        key: stored.key,
      }
    }),
  )
}
