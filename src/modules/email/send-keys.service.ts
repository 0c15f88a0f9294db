import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import { Conflict, Invalid } from '../../platform/http/errors.js'
import type { Communication } from './communications.schemas.js'
import { getCommunication } from './communications.service.js'
import type { SendEmailInput } from './send.schemas.js'
import { type SendDeps, sendEmail } from './send.service.js'
import {
  deleteSendKeyClaim,
  findSendKey,
  insertSendKeyClaim,
  setSendKeyCommunication,
} from './send-keys.repository.js'

/** A claim that recorded no send after this long belongs to a process that died mid-send. */
const STALE_CLAIM_SECONDS = 600
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** The `Idempotency-Key` header, checked: 1 to 255 visible ASCII characters, or absent. */
export function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw new Invalid('Idempotency-Key must be 1 to 255 visible ASCII characters')
  }
  return header
}

/**
 * Sends once per key (without a key, sends): a retry with the key of a recorded send gets that record back
 * (`replayed`) and is neither sent nor charged again; a retry while the first is under way gets 409. A
 * send that fails gives its key up, so that retrying it may succeed.
 */
export async function sendEmailOncePerKey(
  deps: SendDeps,
  auth: AuthContext,
  input: SendEmailInput,
  key: string | undefined,
): Promise<{ record: Communication; replayed: boolean }> {
  if (key === undefined) return { record: await sendEmail(deps, auth, input), replayed: false }
  const accountId = auth.account_id
  if (!(await insertSendKeyClaim(deps.db, accountId, key, STALE_CLAIM_SECONDS))) {
    const claimed = await findSendKey(deps.db, accountId, key)
    if (!claimed?.communicationId) {
      throw new Conflict('A send with this Idempotency-Key is under way; retry once it has finished')
    }
    return { record: await getCommunication(deps.db, accountId, claimed.communicationId), replayed: true }
  }
  try {
    const record = await sendEmail(deps, auth, input, (tx, communicationId) =>
      setSendKeyCommunication(tx, accountId, key, communicationId),
    )
    return { record, replayed: false }
  } catch (error) {
    await deleteSendKeyClaim(deps.db, accountId, key)
    throw error
  }
}
