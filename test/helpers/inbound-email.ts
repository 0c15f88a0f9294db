import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { insertCommunication } from '../../src/modules/email/communications.repository.js'
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
