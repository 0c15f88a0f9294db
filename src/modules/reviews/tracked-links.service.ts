import type { Database } from '../../platform/db/connection.js'
import { NotFound } from '../../platform/http/errors.js'
import { isBotVisit } from '../../platform/http/visits.js'
import type { Logger } from '../../platform/log/logger.js'
import { getAccount, isAccountServing } from '../accounts/accounts.service.js'
import { findRequestByPublicCode, recordFirstClick } from './requests.repository.js'
import { reviewUrlFor } from './review-links.service.js'

export const REVIEW_LINK_GONE = 'Review link not found'
const CODE = /^[A-Za-z0-9_-]{12}$/

/**
 * `GET /r/:code`: the platform's review URL. A person's first click on a sent request moves it to
 * `clicked` (which cancels its follow-up); a bot's visit (link previews) and later clicks change nothing.
 */
export async function followTrackedLink(
  deps: { db: Database; log: Logger },
  code: string,
  visit: { userAgent: string | undefined },
): Promise<string> {
  const request = CODE.test(code) ? await findRequestByPublicCode(deps.db, code) : undefined
  // A removed account's link is gone at once, its click recorded nowhere, though its rows go later.
  if (!request || !(await isAccountServing(deps.db, request.accountId, 'visit')))
    throw new NotFound(REVIEW_LINK_GONE)
  const account = await getAccount(deps.db, request.accountId)
  const accounts = account?.parent_account ? [request.accountId, account.parent_account] : [request.accountId]
  const url = await reviewUrlFor(deps.db, accounts, request.platform)
  if (!url) throw new NotFound(REVIEW_LINK_GONE)
  if (
    !isBotVisit(visit.userAgent) &&
    (await recordFirstClick(deps.db, request.accountId, request.id, new Date()))
  )
    deps.log.info({ request_id: request.id, platform: request.platform }, 'review request clicked')
  return url
}
