import { openSecret, sealSecret } from '../../platform/crypto/secret-box.js'
import type { Database } from '../../platform/db/connection.js'
import { DomainError, Unavailable } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import { requireChangeableAccount } from '../accounts/accounts.service.js'
import { findMailSubuser, upsertMailSubuser } from './mail-subusers.repository.js'
import type { MailSubuser } from './mail-subusers.schemas.js'
import { SENDGRID_API_KEY_MISCONFIGURED, type SendgridClient } from './sendgrid.js'

/** The spec's 403 when the provider key is missing or unusable. */
export class MailProviderMisconfigured extends DomainError {
  constructor() {
    super(403, SENDGRID_API_KEY_MISCONFIGURED, { error: 'SENDGRID_API_MISCONFIGURED' })
  }
}

/** What an account's mail credentials are read with. */
export interface MailSubusersDeps {
  db: Database
  /** SECRETS_ENCRYPTION_KEY, which seals the subusers' API keys. */
  secretsKey: Buffer | undefined
  /** SENDGRID_API_KEY, the parent account's key. */
  sendgridApiKey: string | undefined
}

/** Sets the SendGrid subuser an account sends through; its API key is stored encrypted with `secretsKey`. */
export async function setMailSubuser(
  db: Database,
  secretsKey: Buffer | undefined,
  accountId: string,
  input: { username: string; api_key: string },
): Promise<MailSubuser> {
  if (!secretsKey) throw new Unavailable('SECRETS_ENCRYPTION_KEY is not set: subuser keys cannot be stored')
  await requireChangeableAccount(db, accountId)
  const row = await upsertMailSubuser(db, accountId, {
    username: input.username,
    apiKeyEncrypted: sealSecret(secretsKey, input.api_key),
  })
  return {
    account_id: row.accountId,
    username: row.username,
    api_key_set: true,
    updated_at: row.updatedAt.toISOString(),
  }
}

export interface MailCredentials {
  /** The key mail is sent with: the subuser's, else the parent key (SendGrid ignores On-Behalf-Of on mail send). */
  apiKey: string
  /** The subuser settings calls act for, with the parent key and On-Behalf-Of. */
  subuser: string | undefined
}

/** The credentials of the account's mail, or the spec's 403 when there is no usable key. */
export async function mailCredentials(deps: MailSubusersDeps, accountId: string): Promise<MailCredentials> {
  const { secretsKey, sendgridApiKey } = deps
  const subuser = await findMailSubuser(deps.db, accountId)
  if (subuser) {
    if (!secretsKey) throw new MailProviderMisconfigured()
    try {
      return { apiKey: openSecret(secretsKey, subuser.apiKeyEncrypted), subuser: subuser.username }
    } catch {
      // Sealed with another SECRETS_ENCRYPTION_KEY: unusable until the key is restored or the subuser set again.
      throw new MailProviderMisconfigured()
    }
  }
  if (!sendgridApiKey) throw new MailProviderMisconfigured()
  return { apiKey: sendgridApiKey, subuser: undefined }
}

/** The SendGrid subuser of a removed account, to delete at SendGrid with its Inbound Parse settings. */
export interface SubuserRemoval {
  account_id: string
  username: string
}

/**
 * Queues, in the removal's transaction (`account.removed`), the deletion at SendGrid of each removed
 * account's subuser: its row is read now, before the removal deletes it.
 */
export async function queueSubuserRemovals(
  tx: Database,
  accountIds: string[],
  enqueue: (tx: Database, removal: SubuserRemoval) => Promise<unknown>,
): Promise<void> {
  for (const accountId of accountIds) {
    const subuser = await findMailSubuser(tx, accountId)
    if (subuser) await enqueue(tx, { account_id: accountId, username: subuser.username })
  }
}

/**
 * Deletes a removed account's state at SendGrid: every Inbound Parse setting of its subuser, then the
 * subuser. Each step is done again harmlessly: what SendGrid no longer has (404) counts as deleted. Without
 * the parent key (SENDGRID_API_KEY) nothing at SendGrid can be reached, which is logged.
 */
export async function removeSubuserAtSendgrid(
  deps: { sendgrid: SendgridClient; sendgridApiKey: string | undefined; log: Logger },
  removal: SubuserRemoval,
): Promise<void> {
  if (!deps.sendgridApiKey) {
    deps.log.warn(
      { account_id: removal.account_id },
      'removed account has a SendGrid subuser, but no SENDGRID_API_KEY is set to delete it',
    )
    return
  }
  const settings = await deps.sendgrid.listParseSettings(removal.username)
  for (const { hostname } of settings) await deps.sendgrid.deleteParseSettings(removal.username, hostname)
  const deleted = await deps.sendgrid.deleteSubuser(removal.username)
  deps.log.info(
    { account_id: removal.account_id, parse_settings: settings.length, subuser_deleted: deleted },
    'SendGrid subuser of a removed account deleted',
  )
}
