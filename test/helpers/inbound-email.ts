import { randomBytes } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { insertCommunication } from '../../src/modules/email/communications.repository.js'
import { communications } from '../../src/modules/email/tables.js'
import { listSupportRoomMessages, listSupportThreads } from '../../src/modules/support/support.service.js'
import type { Database } from '../../src/platform/db/connection.js'
import type { Tenant } from './fixtures.js'

export const INBOUND_PATH = '/mailprovider/webhook/inbound'

export interface Reply {
  messageId?: string
  inReplyTo?: string
  references?: string
  from?: string
  to?: string
  subject?: string
  text?: string
  html?: string
}

/** The header text SendGrid posts in `headers`, folded the way mail servers fold long lines. */
export function headerText(reply: Reply): string {
  return [
    'Received: by mx0047p1mdw1.sendgrid.net with SMTP id 3aPc0xOm4T\r\n Mon, 13 Nov 2026 10:00:00 +0000',
    `From: ${reply.from ?? '"Jane Doe" <jane@example.com>'}`,
    `To: ${reply.to ?? 'replies@agency.example.com'}`,
    `Subject: ${reply.subject ?? 'Re: Your quote'}`,
    ...(reply.messageId ? [`Message-ID: <${reply.messageId}>`] : []),
    ...(reply.inReplyTo ? [`In-Reply-To: <${reply.inReplyTo}>`] : []),
    ...(reply.references ? [`References: ${reply.references}`] : []),
    'MIME-Version: 1.0',
  ].join('\r\n')
}

/** A parsed-form Inbound Parse post, as SendGrid sends it (all fields UTF-8). */
export function replyForm(reply: Reply): FormData {
  const form = new FormData()
  form.append('headers', headerText(reply))
  form.append('from', reply.from ?? '"Jane Doe" <jane@example.com>')
  form.append('to', reply.to ?? 'replies@agency.example.com')
  form.append('cc', '')
  form.append('subject', reply.subject ?? 'Re: Your quote')
  form.append('text', reply.text ?? 'Thanks, that works for me.')
  if (reply.html !== '') form.append('html', reply.html ?? '<p>Thanks, that works for me.</p>')
  form.append('envelope', JSON.stringify({ to: ['replies@agency.example.com'], from: 'jane@example.com' }))
  form.append('charsets', JSON.stringify({ to: 'UTF-8', from: 'UTF-8', subject: 'UTF-8', text: 'UTF-8' }))
  form.append('spam_score', '0.1')
  return form
}

export interface EncodedBody {
  type: string
  payload: Buffer
}

/**
 * A multipart body from parts given as bytes: FormData encodes every field as UTF-8, while SendGrid
 * posts each field in the charset it names in `charsets`.
 */
export function rawMultipart(
  parts: { name: string; value: Buffer; file?: { filename: string; type: string } }[],
): EncodedBody {
  const boundary = `xYzZY${randomBytes(8).toString('hex')}`
  const chunks = parts.map(({ name, value, file }) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"` +
          (file ? `; filename="${file.filename}"\r\nContent-Type: ${file.type}` : '') +
          '\r\n\r\n',
      ),
      value,
      Buffer.from('\r\n'),
    ]),
  )
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
  }
}

/**
 * A reply as a mail client writes it: the sender's name and the subject as RFC 2047 encoded words,
 * the text in ISO-8859-1 quoted-printable beside an HTML alternative, and a base64 PDF attachment.
 */
export function mimeReply(reply: { messageId: string; inReplyTo: string; pdf: Buffer }): Buffer {
  return Buffer.from(
    [
      'Received: by mx0047p1mdw1.sendgrid.net with SMTP id 3aPc0xOm4T\r\n Mon, 13 Nov 2026 10:00:00 +0000',
      'From: "=?UTF-8?Q?M=C3=BCller,_J=C3=BCrgen?=" <juergen@example.de>',
      'To: replies@agency.example.com',
      'Subject: Re: =?ISO-8859-1?Q?Ihr_Angebot_f=FCr_M=FCnchen?=',
      `Message-ID: <${reply.messageId}>`,
      `In-Reply-To: <${reply.inReplyTo}>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="mixed-7f3a"',
      '',
      '--mixed-7f3a',
      'Content-Type: multipart/alternative; boundary="alt-7f3a"',
      '',
      '--alt-7f3a',
      'Content-Type: text/plain; charset=iso-8859-1',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'Danke, das passt so.',
      '',
      'Gr=FC=DFe, J=FCrgen',
      '--alt-7f3a',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Danke, das passt so.</p>',
      '--alt-7f3a--',
      '--mixed-7f3a',
      'Content-Type: application/pdf; name="Angebot.pdf"',
      'Content-Disposition: attachment; filename="Angebot.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      ...(reply.pdf.toString('base64').match(/.{1,76}/g) ?? []),
      '--mixed-7f3a--',
      '',
    ].join('\r\n'),
  )
}

/** A "send raw" Inbound Parse post: the message's exact bytes in `email`, beside SendGrid's other fields. */
export function rawReplyForm(email: Buffer): EncodedBody {
  const field = (name: string, value: string) => ({ name, value: Buffer.from(value) })
  return rawMultipart([
    field('dkim', '{@example.de : pass}'),
    { name: 'email', value: email },
    field('to', 'replies@agency.example.com'),
    field('from', '"=?UTF-8?Q?M=C3=BCller,_J=C3=BCrgen?=" <juergen@example.de>'),
    field('sender_ip', '203.0.113.7'),
    field('spam_report', 'Spam detection software has NOT identified this incoming email as possible spam.'),
    field('envelope', '{"to":["replies@agency.example.com"],"from":"juergen@example.de"}'),
    field('subject', 'Re: =?ISO-8859-1?Q?Ihr_Angebot_f=FCr_M=FCnchen?='),
    field('spam_score', '0.1'),
    field('charsets', '{"to":"UTF-8","from":"UTF-8","subject":"UTF-8"}'),
    field('SPF', 'pass'),
  ])
}

/** Posts to the inbound webhook as SendGrid does: no credentials. */
export async function postInbound(app: FastifyInstance, body: FormData | EncodedBody, prefix = '/v1/e') {
  let encoded: EncodedBody
  if (body instanceof FormData) {
    const request = new Request('http://localhost', { method: 'POST', body })
    encoded = {
      type: request.headers.get('content-type') as string,
      payload: Buffer.from(await request.arrayBuffer()),
    }
  } else encoded = body
  return app.inject({
    method: 'POST',
    url: `${prefix}${INBOUND_PATH}`,
    headers: { 'content-type': encoded.type },
    payload: encoded.payload,
  })
}

/** An email the tenant's user sent through SendGrid, as the send route records it. */
export async function sentEmail(db: Database, tenant: Tenant, html = '<p>Here is your quote</p>') {
  const msgId = `abc123${randomBytes(6).toString('hex')}`
  const row = await insertCommunication(db, tenant.accountId, {
    type: 'OUTGOING',
    module: 'SENDGRID',
    msgId,
    success: true,
    subject: 'Your quote',
    html,
    text: 'Here is your quote',
    body: { custom_args: { uid: tenant.userId } },
  })
  return { id: row.id, msgId }
}

/** The account's received (INCOMING) communication records. */
export function inboundRecords(db: Database, accountId: string) {
  return db
    .select()
    .from(communications)
    .where(and(eq(communications.accountId, accountId), eq(communications.type, 'INCOMING')))
}

/** The account's support conversations with their rooms (the contact's only, when given). */
export function supportThreadsOf(db: Database, accountId: string, contactId?: string) {
  return listSupportThreads(db, accountId, contactId === undefined ? {} : { contactId })
}

/** Every support message of the account, room by room. */
export async function supportMessagesOf(db: Database, accountId: string) {
  const rooms = (await supportThreadsOf(db, accountId)).flatMap((thread) => thread.room ?? [])
  const messages = await Promise.all(rooms.map((room) => listSupportRoomMessages(db, accountId, room._id)))
  return messages.flat()
}
