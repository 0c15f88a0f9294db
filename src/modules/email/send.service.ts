import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { Platform } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Events } from '../../platform/events/emit.js'
import { Invalid, Unavailable } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import type { ObjectStorage } from '../../platform/storage/object-storage.js'
import type { User } from '../accounts/accounts.schemas.js'
import { getUser } from '../accounts/accounts.service.js'
import type { Contact } from '../accounts/contacts.schemas.js'
import { findRecipientContacts } from '../accounts/contacts.service.js'
import { grantCredits, reserveCredits } from '../accounts/credits.service.js'
import { openProspectConversation, recordEmailFromUser } from '../accounts/prospect-conversations.service.js'
import { insertCommunication } from './communications.repository.js'
import type { Communication } from './communications.schemas.js'
import { communicationView, storeCommunicationAttachments } from './communications.service.js'
import { assertNotOnDoNotDisturb } from './do-not-disturb.service.js'
import { createMailProvider, type MailProvider, type SentMail } from './mail-provider.js'
import type { Address, SendEmailInput } from './send.schemas.js'
import { type SendgridAddress, SendgridError, type SendgridMailBody, sendgridFailure } from './sendgrid.js'
import type { SentBy } from './tables.js'
import { oneClickHeaders, type UnsubscribeDeps, unsubscribeLinkKey } from './unsubscribe.service.js'
import { lookUpVariables, parseFallbackValues, renderVariables } from './variables.service.js'

export const MAX_ATTACHMENTS = 12
export const MAX_ATTACHMENT_BYTES = 2 * 1024 * 1024
/** SendGrid refuses messages over 30 MB; attachments travel base64-encoded (4/3 of their size). */
const MAX_MESSAGE_BYTES = 30 * 1024 * 1024

/** What sending needs. */
export interface SendDeps {
  db: Database
  storage: ObjectStorage
  events: Events
  provider: MailProvider
  log: Logger
  unsubscribe: UnsubscribeDeps
  /** An unrecorded claim on a send key this old belongs to a process that died (JOBS_LOCK_SECONDS). */
  claimStaleMs: number
}

/** What sending needs, from the platform: for the send route and for other modules that send (reviews). */
export function sendDepsOf(platform: Platform): SendDeps {
  const { db, config, storage, events, log } = platform
  return {
    db,
    storage,
    events,
    log,
    provider: createMailProvider({ db, mail: config.mail, secretsKey: config.secretsKey, log }),
    unsubscribe: {
      linkKey: unsubscribeLinkKey(config.secretsKey, config.jwt.secret),
      publicBaseUrl: config.publicBaseUrl,
    },
    claimStaleMs: config.jobs.lockSeconds * 1000,
  }
}

/** EMAIL_SEND_MAINTENANCE: the spec's send endpoint, "currently disabled for maintenance; responds 503". */
export function assertSendingOpen(sendMaintenance: boolean): void {
  if (sendMaintenance) throw new Unavailable('Email sending is under maintenance')
}

export const tooManyAttachments = () =>
  new Invalid(`attachments must contain at most ${MAX_ATTACHMENTS} files`)
export const attachmentTooLarge = (index: number) => new Invalid(`attachments[${index}] must be at most 2 MB`)

/** The rules the schema cannot say: content or template, and the attachment limits. */
function assertSendable(input: SendEmailInput): void {
  if (!input.template_id && !input.content?.length) {
    throw new Invalid('content is required when template_id is absent')
  }
  if (input.template_id && !input.dynamic_template_data) {
    throw new Invalid('dynamic_template_data is required when template_id is present')
  }
  if (input.attachments.length > MAX_ATTACHMENTS) throw tooManyAttachments()
  input.attachments.forEach((file, i) => {
    if (file.data.length > MAX_ATTACHMENT_BYTES) throw attachmentTooLarge(i)
  })
  const encoded = input.attachments.reduce((sum, file) => sum + Math.ceil(file.data.length / 3) * 4, 0)
  if (encoded >= MAX_MESSAGE_BYTES) {
    throw new Invalid('attachments exceed the 30 MB message limit of the email provider once encoded')
  }
}

/** SendGrid refuses names holding `;` or `,` (they would split the address header). */
function address({ email, name }: Address): SendgridAddress {
  const safeName = name?.replace(/[;,]/g, ' ').replace(/\s+/g, ' ').trim()
  return safeName ? { email, name: safeName } : { email }
}

async function findSender(db: Database, uid: string): Promise<User | null> {
  return getUser(db, uid).catch(() => null)
}

function sentBy(user: User | null, sender: Address): SentBy {
  if (!user)
    return {
      name: sender.name ?? '',
      email: sender.email,
      first_name: '',
      last_name: '',
      phone: '',
      image: '',
    }
  const { name, email, first_name, last_name, phone, image } = user
  return { name, email, first_name, last_name, phone, image }
}

/** Rule 2: `{{variables}}` in the subject and every content value. */
async function renderMessage(
  db: Database,
  accountId: string,
  input: SendEmailInput,
  context: { contact: Contact | undefined; user: User | null },
) {
  const found = await lookUpVariables(db, accountId, {
    person_id: input.person_id,
    business_id: input.business_id,
    instasite_id: input.instasite_id,
    instareport_id: input.instareport_id,
    contact: context.contact ?? null,
    user: context.user,
  })
  const fallbacks = parseFallbackValues(input.fallback_values)
  return {
    subject: renderVariables(input.subject, found, fallbacks, { html: false }),
    content: input.content?.map((part) => ({
      type: part.type,
      value: renderVariables(part.value, found, fallbacks, { html: part.type === 'text/html' }),
    })),
  }
}

interface Rendered {
  subject: string
  content: { type: string; value: string }[] | undefined
}

/** Rule 7: the provider request, with per-message custom args and the tracking headers. */
function providerRequest(
  input: SendEmailInput,
  rendered: Rendered,
  ids: { accountId: string; uid: string; communicationId: string },
  unsubscribeHeaders: Record<string, string>,
): SendgridMailBody {
  const personalization = {
    to: input.recipients.map(address),
    ...(input.cc?.length && { cc: input.cc.map(address) }),
    ...(input.bcc?.length && { bcc: input.bcc.map(address) }),
    subject: rendered.subject,
    custom_args: {
      account_id: ids.accountId,
      uid: ids.uid,
      origin: input.origin,
      communication_id: ids.communicationId,
    },
    ...(input.template_id && { dynamic_template_data: input.dynamic_template_data }),
  }
  // SendGrid wants text/plain before text/html.
  const plainFirst = (part: { type: string }) => (part.type === 'text/plain' ? 0 : 1)
  const content = rendered.content && [...rendered.content].sort((a, b) => plainFirst(a) - plainFirst(b))
  return {
    personalizations: [personalization],
    from: address(input.sender),
    ...(input.reply_to && { reply_to: address(input.reply_to) }),
    subject: rendered.subject,
    ...(input.template_id ? { template_id: input.template_id } : { content }),
    ...(input.attachments.length > 0 && {
      attachments: input.attachments.map((file) => ({
        content: file.data.toString('base64'),
        filename: file.filename,
        type: file.type,
        disposition: 'attachment' as const,
      })),
    }),
    headers: {
      'X-Account-ID': ids.accountId,
      'X-User-ID': ids.uid,
      'X-Email-Origin': input.origin,
      ...unsubscribeHeaders,
    },
  }
}

async function deliver(
  deps: SendDeps,
  send: (body: SendgridMailBody) => Promise<SentMail>,
  body: SendgridMailBody,
  refund: () => Promise<unknown>,
): Promise<SentMail> {
  try {
    return await send(body)
  } catch (error) {
    await refund()
    if (!(error instanceof SendgridError)) throw error
    deps.log.warn({ status: error.status, errors: error.errors }, 'email provider refused the message')
    throw sendgridFailure(error, 'the email')
  }
}

/** A send that must happen once (send-keys.service.ts). */
export interface SendAttempt {
  /** The communication's id, chosen when its key was claimed. */
  communicationId: string
  /** The provider's message when it took this communication already, from an attempt that died. */
  sent: SentMail | undefined
  /** Runs in the transaction that records the send: marks the key recorded. */
  onRecorded: (tx: Database) => Promise<void>
}

/**
 * Sends an email with the spec's twelve rules, in its order. Credits are reserved (with the
 * communication id as reference) before the provider call and released when it fails, so a message
 * is never sent uncharged nor charged twice; the record, the threads and the events are written in
 * one transaction after the provider accepted the message.
 */
export async function sendEmail(
  deps: SendDeps,
  auth: AuthContext,
  input: SendEmailInput,
  attempt?: SendAttempt,
): Promise<Communication> {
  const { db } = deps
  const accountId = auth.account_id
  assertSendable(input)
  const send = await deps.provider.prepare(accountId)
  const contacts = await findRecipientContacts(db, accountId, input.recipients)
  const user = await findSender(db, auth.uid)
  // `{{contact.*}}` reads the first recipient who is a contact: one message goes to all recipients.
  const rendered = await renderMessage(db, accountId, input, { contact: contacts[0], user })
  const everyone = [...input.recipients, ...(input.cc ?? []), ...(input.bcc ?? [])].map((r) => r.email)
  await assertNotOnDoNotDisturb(db, accountId, everyone)

  const communicationId = attempt?.communicationId ?? newId()
  // Once per communication: a retry of a send whose process died is not charged again.
  await reserveCredits(db, accountId, 'email', input.recipients.length, communicationId)
  const refund = () => grantCredits(db, accountId, input.recipients.length, communicationId, 'email.refund')
  const attachments = await storeCommunicationAttachments(
    deps.storage,
    accountId,
    communicationId,
    input.attachments,
  ).catch(async (error: unknown) => {
    await refund()
    throw error
  })
  const body = providerRequest(
    input,
    rendered,
    { accountId, uid: auth.uid, communicationId },
    oneClickHeaders(deps.unsubscribe, accountId, input.recipients),
  )
  const sent = attempt?.sent ?? (await deliver(deps, send, body, refund))

  const isMember = user?.memberships.some((m) => m.account_id === accountId) ?? false
  const row = await inTransaction(db, async (tx) => {
    const conversationIds: string[] = []
    for (const contact of contacts) {
      const { conversation, created } = await openProspectConversation(tx, accountId, {
        contact_id: contact._id,
        channel: 'prospect',
        title: contact.name || contact.email || '',
        member_user_ids: [],
      })
      if (isMember) await recordEmailFromUser(tx, accountId, conversation._id, auth.uid)
      if (created) await deps.events.emit(tx, accountId, 'new', { conversation_id: conversation._id })
      conversationIds.push(conversation._id)
    }
    const record = await insertCommunication(tx, accountId, {
      id: communicationId,
      type: 'OUTGOING',
      module: deps.provider.tag,
      messageType: 'EMAIL',
      origin: input.origin,
      sentBy: sentBy(user, input.sender),
      headers: sent.headers,
      body: { ...body, ...(body.attachments && { attachments: [] }) },
      msgId: sent.msgId,
      contactIds: contacts.map((c) => c._id),
      conversationIds,
      attachments,
      success: true,
    })
    await deps.events.emit(tx, accountId, 'message', { communication_id: record.id })
    await attempt?.onRecorded(tx)
    return record
  })
  deps.log.info(
    { communication_id: row.id, msg_id: sent.msgId, recipients: input.recipients.length },
    'email sent',
  )
  return communicationView(row, [])
}
