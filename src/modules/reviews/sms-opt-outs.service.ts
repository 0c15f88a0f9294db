import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Forbidden } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import type { Logger } from '../../platform/log/logger.js'
import { customerKeyOf } from './scheduling.service.js'
import {
  deleteOptOuts,
  insertOptOuts,
  listOptOuts,
  type SmsOptOutRow,
  sendersToPhone,
} from './sms-opt-outs.repository.js'
import type { InboundSmsBody, ListQuery, SmsOptOut } from './sms-opt-outs.schemas.js'
import { isTwilioSignatureValid, type TwilioParams } from './twilio.js'

/** Twilio's opt-out keywords: a reply of one of them, alone, opts the number out. */
export const OPT_OUT_KEYWORDS: readonly string[] = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']
/** Twilio's opt-in keywords: the number may be texted again. */
export const OPT_IN_KEYWORDS: readonly string[] = ['START', 'UNSTOP', 'YES']

/** The answer to Twilio's webhook: TwiML that sends no reply (Twilio itself confirms an opt-out or opt-in). */
export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
export const INVALID_TWILIO_SIGNATURE = 'Invalid X-Twilio-Signature'

/** A number as review SMS are stored and opt-outs kept: digits and '+', as a customer key is made. */
export const phoneKeyOf = (phone: string | null | undefined): string | undefined =>
  customerKeyOf({ phone: phone ?? undefined }) ?? undefined

/**
 * Refuses (403) a webhook request Twilio did not sign: its signature covers the URL Twilio called, which is
 * PUBLIC_BASE_URL followed by the request's path and query, and every POST parameter.
 */
export function verifyTwilioRequest(
  settings: { authToken: string | undefined; publicBaseUrl: string },
  request: { pathAndQuery: string; signature: string | undefined; params: TwilioParams },
): void {
  const url = `${settings.publicBaseUrl}${request.pathAndQuery}`
  if (!isTwilioSignatureValid(settings.authToken, request.signature, { url, params: request.params }))
    throw new Forbidden(INVALID_TWILIO_SIGNATURE)
}

export type InboundSmsOutcome = 'opted_out' | 'opted_in' | 'ignored'

const keywordOf = (body: string | undefined) => body?.trim().toUpperCase() ?? ''

/**
 * The accounts a reply is for: those that sent a review SMS to the customer's number and, when the reply
 * names the number it was sent to, sent from it (or from the default sender, stored without a number).
 */
async function accountsTexted(db: Database, phone: string, to: string | undefined): Promise<string[]> {
  const senders = await sendersToPhone(db, phone)
  const matching = senders.filter((sender) => !to || sender.from === null || phoneKeyOf(sender.from) === to)
  return [...new Set(matching.map((sender) => sender.accountId))]
}

/**
 * A verified reply: one of Twilio's opt-out keywords opts the number out for the accounts it is for, an
 * opt-in keyword opts it back in; any other text changes nothing. Repeated, it changes nothing more.
 */
export async function receiveInboundSms(
  deps: { db: Database; log: Logger },
  message: InboundSmsBody,
): Promise<InboundSmsOutcome> {
  const keyword = keywordOf(message.Body)
  const optingOut = OPT_OUT_KEYWORDS.includes(keyword)
  const phone = phoneKeyOf(message.From)
  if (!phone || !(optingOut || OPT_IN_KEYWORDS.includes(keyword))) return 'ignored'
  return inTransaction(deps.db, async (tx) => {
    const accountIds = await accountsTexted(tx, phone, phoneKeyOf(message.To))
    if (optingOut) await insertOptOuts(tx, accountIds, { phone, keyword })
    else await deleteOptOuts(tx, accountIds, phone)
    const outcome = optingOut ? 'opted_out' : 'opted_in'
    // The number is the customer's: the log says what happened, not to whom.
    deps.log.info(
      { message_sid: message.MessageSid, accounts: accountIds.length, outcome },
      'review SMS reply',
    )
    return outcome
  })
}

const optOutView = (row: SmsOptOutRow): SmsOptOut => ({
  _id: row.id,
  account_id: row.accountId,
  phone: row.phone,
  keyword: row.keyword,
  created_at: row.createdAt.toISOString(),
})

export function listAccountSmsOptOuts(
  db: Database,
  accountId: string,
  query: ListQuery,
): Promise<{ data: SmsOptOut[]; pagination: Pagination }> {
  const phone = query.phone === undefined ? undefined : (phoneKeyOf(query.phone) ?? query.phone)
  return paginate(query, (window) => listOptOuts(db, accountId, { phone }, window), optOutView)
}
