import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Changes } from '../../platform/events/changes.js'
import type { Events } from '../../platform/events/emit.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import type { Logger } from '../../platform/log/logger.js'
import type { ObjectStorage } from '../../platform/storage/object-storage.js'
import { getAccount } from '../accounts/accounts.service.js'
import { findOrCreateContactByEmail } from '../accounts/contacts.service.js'
import {
  addSupportMessage,
  EMAIL_INBOX_TYPE,
  openConversationFor,
  roomForConversation,
} from '../support/support.service.js'
import type { CommunicationRow } from './communications.repository.js'
import { storeCommunicationAttachments } from './communications.service.js'
import { findInboundRecord, findOriginalsByMessageIds, insertInboundRecord } from './inbound.repository.js'
import { MESSAGE_ID_MAX_LENGTH } from './inbound.schemas.js'
import { angleIds, type InboundEmail, parseHeaders, parseSender } from './inbound-parse.service.js'

export interface InboundDeps {
  db: Database
  /** The `module` tag of the configured provider's records (`mailProviderTag`), which replies thread to. */
  providerTag: string
  storage: ObjectStorage
  events: Events
  changes: Changes
  log: Logger
}

export type InboundOutcome =
  | { status: 'stored'; accountId: string; communicationId: string; supportMessageId: string; roomId: string }
  | { status: 'duplicate'; accountId: string }
  | { status: 'unmatched' }
  | { status: 'dropped'; reason: 'sender_address_too_long' }

/** The spec's nine inbound steps. Only a reply to one of our sent emails is kept: it names the account. */
export async function receiveInboundEmail(deps: InboundDeps, email: InboundEmail): Promise<InboundOutcome> {
  const { db, log } = deps
  // Replies thread to mail of the configured provider, whose Inbound Parse posts them.
  const moduleTag = deps.providerTag
  // Step 1: ids between angle brackets, from the raw header text.
  const headers = parseHeaders(email.headers)
  const msgId = keptMessageId(angleIds(headers.get('message-id')?.[0])[0], log)
  const inReplyTo = angleIds(headers.get('in-reply-to')?.[0])[0]
  const lastReference = angleIds(headers.get('references')?.join(' ')).at(-1)

  // Step 2: the original by msgID = referenceID, In-Reply-To first, then the last of References.
  const found = await findOriginal(db, moduleTag, [inReplyTo, lastReference])
  if (!found) {
    // Without the original no account can own the reply, and storing it anywhere would leak it.
    log.info(
      { msg_id: msgId, in_reply_to: inReplyTo ?? null, references_last: lastReference ?? null },
      'inbound email matches no sent email; answered and not stored',
    )
    return { status: 'unmatched' }
  }
  const { original, referenceId } = found
  const accountId = original.accountId
  if (msgId && (await findInboundRecord(db, accountId, moduleTag, msgId)))
    return { status: 'duplicate', accountId }

  // Step 3 (outside the transaction, read only): contacts live under the parent account.
  const account = await getAccount(db, accountId)
  const contactAccountId = account?.parent_account ?? accountId
  const sender = parseSender(email.from)
  if (sender.email.length > EMAIL_MAX_LENGTH) {
    // No SMTP path carries such an address, so no reply reaches it; and it fits no index on contacts.
    log.warn({ from_length: sender.email.length }, 'inbound email dropped: its sender address is too long')
    return { status: 'dropped', reason: 'sender_address_too_long' }
  }

  // Step 8's uploads happen before the transaction: storage cannot roll back, the database can.
  const communicationId = newId()
  const attachments = await storeCommunicationAttachments(
    deps.storage,
    accountId,
    communicationId,
    email.attachments,
  )

  const stored = await inTransaction(db, async (tx) => {
    const contact = await findOrCreateContactByEmail(tx, deps.changes, contactAccountId, sender)
    // Step 7 first: inserting the record is the gate that drops a concurrent redelivery.
    const record = await insertInboundRecord(tx, accountId, {
      id: communicationId,
      module: moduleTag,
      success: true,
      msgId,
      referenceId,
      fromAddress: email.from,
      toAddresses: splitAddresses(email.to),
      subject: email.subject,
      html: email.html,
      text: email.text,
      attachments,
      contactIds: [contact._id],
      conversationIds: original.conversationIds,
      headers: Object.fromEntries([...headers].map(([name, values]) => [name, values.join(', ')])),
      body: { envelope: email.envelope, cc: splitAddresses(email.cc) },
    })
    if (!record) return undefined

    // Steps 4 and 5.
    const conversation = await openConversationFor(tx, accountId, contact._id, email.subject)
    const room = await roomForConversation(tx, accountId, {
      conversationId: conversation._id,
      participants: [contact._id],
      inboxType: EMAIL_INBOX_TYPE,
    })
    // Step 6: the original as the OUTGOING message once, then the reply.
    await addSupportMessage(tx, accountId, {
      roomId: room._id,
      conversationId: conversation._id,
      direction: 'OUTGOING',
      content: original.html || original.text || '',
      communicationId: original.id,
      msgId: original.msgId,
      createdAt: original.createdAt,
    })
    const { message } = await addSupportMessage(tx, accountId, {
      roomId: room._id,
      conversationId: conversation._id,
      direction: 'INCOMING',
      content: email.html || email.text,
      communicationId: record.id,
      msgId,
      attachments,
    })

    // Step 9.
    const userId = senderUserId(original)
    if (userId) await deps.events.emit(tx, accountId, 'joinRoom', { roomId: room._id, userId })
    await deps.events.emit(tx, accountId, 'message', { support_message_id: message._id, room_id: room._id })
    return { communicationId: record.id, supportMessageId: message._id, roomId: room._id }
  })

  if (!stored) return { status: 'duplicate', accountId }
  return { status: 'stored', accountId, ...stored }
}

async function findOriginal(
  db: Database,
  moduleTag: string,
  referenceIds: (string | undefined)[],
): Promise<{ original: CommunicationRow; referenceId: string } | undefined> {
  const ids = [...new Set(referenceIds.filter((id): id is string => Boolean(id)))]
  const candidates = ids.flatMap((id) => messageIdForms(id).map((form) => ({ id, form })))
  const rows = await findOriginalsByMessageIds(
    db,
    moduleTag,
    candidates.map((c) => c.form),
  )
  for (const candidate of candidates) {
    const original = rows.find((row) => row.msgId === candidate.form)
    if (original) return { original, referenceId: candidate.id }
  }
  return undefined
}

/**
 * The forms of a header id our msgID may take: the id itself, as the spec says, and its local part up
 * to the first dot, since SendGrid builds the Message-ID of sent mail from the `X-Message-Id` we keep.
 */
function messageIdForms(id: string): string[] {
  const local = id.split('@')[0] as string
  return [...new Set([id, local, local.split('.')[0] as string])].filter(Boolean)
}

/** The Message-ID, or null when it is longer than any kept (a redelivery of that reply is then not recognised). */
function keptMessageId(msgId: string | undefined, log: Logger): string | null {
  if (msgId === undefined) return null
  if (msgId.length <= MESSAGE_ID_MAX_LENGTH) return msgId
  log.warn({ msg_id_length: msgId.length }, 'inbound email Message-ID too long to keep; stored without it')
  return null
}

/** The user who sent the original, from the custom args and headers our send puts on every message. */
function senderUserId(original: CommunicationRow): string | undefined {
  const body = original.body as {
    custom_args?: { uid?: unknown }
    personalizations?: { custom_args?: { uid?: unknown } }[]
    headers?: Record<string, unknown>
  }
  const candidates = [
    body.custom_args?.uid,
    ...(body.personalizations ?? []).map((p) => p.custom_args?.uid),
    body.headers?.['X-User-ID'],
    original.headers['x-user-id'],
  ]
  return candidates.find((value): value is string => typeof value === 'string' && value !== '')
}

/** The addresses of a `to`/`cc` header value, split on the commas outside quotes and brackets. */
export function splitAddresses(value: string): string[] {
  const parts: string[] = []
  let current = ''
  let quoted = false
  let angle = false
  for (const char of value) {
    if (char === '"') quoted = !quoted
    else if (char === '<' && !quoted) angle = true
    else if (char === '>' && !quoted) angle = false
    if (char === ',' && !quoted && !angle) {
      parts.push(current)
      current = ''
    } else current += char
  }
  parts.push(current)
  return parts.map((p) => p.trim()).filter(Boolean)
}
