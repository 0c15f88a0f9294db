import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import { newId } from '../../platform/db/ids.js'
import { keyClaimsIn } from '../../platform/db/key-claims.js'
import { Invalid } from '../../platform/http/errors.js'
import { performOncePerKey } from '../../platform/providers/once-per-key.js'
import type { Communication } from './communications.schemas.js'
import { getCommunication } from './communications.service.js'
import type { SentMail } from './mail-provider.js'
import type { SendEmailInput } from './send.schemas.js'
import { type SendDeps, sendEmail } from './send.service.js'
import { emailSendKeys } from './tables.js'

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

const sendKeys = keyClaimsIn(emailSendKeys, {
  accountId: emailSendKeys.accountId,
  key: emailSendKeys.key,
  attemptId: emailSendKeys.communicationId,
  claimedAt: emailSendKeys.claimedAt,
  recordedAt: emailSendKeys.recordedAt,
})

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
 * (`replayed`) and is neither sent nor charged again; a retry while the first is under way gets 409. When
 * the first attempt's process died mid-send, SendGrid is asked whether it took that communication before
 * the retry sends it. A send that fails gives its key up, so that retrying it may succeed.
 */
export async function sendEmailOncePerKey(
  deps: SendDeps,
  auth: AuthContext,
  input: SendEmailInput,
  key: string | undefined,
): Promise<{ record: Communication; replayed: boolean }> {
  if (key === undefined) return { record: await sendEmail(deps, auth, input), replayed: false }
  const accountId = auth.account_id
  return performOncePerKey<SentMail, Communication>({
    db: deps.db,
    claims: sendKeys,
    accountId,
    key,
    staleAfterMs: deps.claimStaleMs,
    underWay: 'A send with this Idempotency-Key is under way; retry once it has finished',
    newAttemptId: newId,
    perform: (communicationId, sent) =>
      sendEmail(deps, auth, input, {
        communicationId,
        sent,
        onRecorded: (tx) => sendKeys.record(tx, accountId, key),
      }),
    replay: (communicationId) => getCommunication(deps.db, accountId, communicationId),
    lookUp: (communicationId) => deps.provider.findSent(accountId, communicationId),
  }).then(({ result, replayed }) => ({ record: result, replayed }))
}
