import { randomBytes } from 'node:crypto'
import type { Config } from '../../config.js'
import type { Database } from '../../platform/db/connection.js'
import type { Logger } from '../../platform/log/logger.js'
import { mailCredentials } from './mail-subusers.service.js'
import { createSendgridClient, type SendgridMailBody } from './sendgrid.js'
import { MODULE_TAGS } from './tables.js'

export interface SentMail {
  /** The provider's message id (SendGrid: X-Message-Id before its first dot). */
  msgId: string
  /** The provider's response headers, `x-message-id` included. */
  headers: Record<string, string>
}

/** Where mail goes: SendGrid, or the outbox that only keeps it in the database (MAIL_PROVIDER). */
export interface MailProvider {
  /** The `module` tag stored on records. */
  tag: string
  /**
   * Resolves what sending for the account needs, or throws the spec's 403 when the provider key is
   * missing: called before anything is charged, so a misconfigured account is never charged.
   */
  prepare(accountId: string): Promise<(body: SendgridMailBody) => Promise<SentMail>>
  /**
   * The message of the communication, when the provider took it: asked when the process that sent it died
   * before recording it. The outbox, which keeps nothing outside, never has one.
   */
  findSent(accountId: string, communicationId: string): Promise<SentMail | undefined>
}

/**
 * The `module` tag of the configured provider's records. Webhooks thread to records of this tag: with
 * the outbox, events and replies posted by hand thread to outbox mail as SendGrid's would to its own.
 */
export const mailProviderTag = (provider: MailSettings['provider']): string =>
  provider === 'sendgrid' ? MODULE_TAGS.sendgrid : MODULE_TAGS.outbox

/** SendGrid-like ids (22 characters), so outbox records look like the real ones. */
const outboxMessageId = () => randomBytes(16).toString('base64url').slice(0, 22)

/** MAIL_PROVIDER and SendGrid's settings. */
export type MailSettings = Config['mail']

export interface MailProviderDeps {
  db: Database
  mail: MailSettings
  /** SECRETS_ENCRYPTION_KEY, which seals the subusers' API keys. */
  secretsKey: Buffer | undefined
  log: Logger
}

export function createMailProvider({ db, mail, secretsKey, log }: MailProviderDeps): MailProvider {
  const tag = mailProviderTag(mail.provider)
  if (mail.provider === 'outbox') {
    return {
      tag,
      prepare: async () => async () => {
        const msgId = outboxMessageId()
        return { msgId, headers: { 'x-message-id': msgId } }
      },
      findSent: async () => undefined,
    }
  }
  const client = createSendgridClient(
    { baseUrl: mail.sendgridBaseUrl, parentApiKey: mail.sendgridApiKey },
    log,
  )
  const credentials = { db, secretsKey, sendgridApiKey: mail.sendgridApiKey }
  return {
    tag,
    async prepare(accountId) {
      const { apiKey } = await mailCredentials(credentials, accountId)
      return async (body) => {
        const { messageId, headers } = await client.sendMail(apiKey, body)
        return { msgId: messageId, headers }
      }
    },
    async findSent(accountId, communicationId) {
      const { apiKey } = await mailCredentials(credentials, accountId)
      // Every message carries its communication's id in its custom args (send.service.ts).
      const found = await client.findMessage(apiKey, { name: 'communication_id', value: communicationId })
      return found ? { msgId: found.messageId, headers: { 'x-message-id': found.messageId } } : undefined
    },
  }
}
