import { openSecret } from '../../platform/crypto/secret-box.js'
import type { Database } from '../../platform/db/connection.js'
import type { Logger } from '../../platform/log/logger.js'
import { findLiveToken } from './connection.repository.js'
import { type GraphSettings, getPageToken, unsubscribeAppFromPage } from './graph.js'
import { isPageUsedElsewhere, listCampaignPages } from './page-unsubscription.repository.js'
import { SOCIALNET_LEADS } from './tables.js'

/**
 * A page of a removed account's lead campaigns, to unsubscribe our app from. The tokens ride sealed (under
 * SECRETS_ENCRYPTION_KEY, as they were stored): the rows that held them are deleted by then.
 */
export interface PageUnsubscription {
  account_id: string
  page_id: string
  /** Every account removed with it: a live campaign of any other account keeps the page subscribed. */
  account_ids: string[]
  page_token_sealed: string | null
  user_token_sealed: string | null
}

/**
 * Queues, in the removal's transaction (`account.removed`), one unsubscription per page of each removed
 * account's lead campaigns, read now, before the removal deletes the campaigns and tokens.
 */
export async function queuePageUnsubscriptions(
  tx: Database,
  accountIds: string[],
  enqueue: (tx: Database, unsubscription: PageUnsubscription) => Promise<unknown>,
): Promise<void> {
  for (const accountId of accountIds) {
    const pages = await listCampaignPages(tx, accountId)
    if (pages.length === 0) continue
    const userToken = (await findLiveToken(tx, accountId, SOCIALNET_LEADS))?.accessToken ?? null
    for (const page of pages)
      await enqueue(tx, {
        account_id: accountId,
        page_id: page.pageId,
        account_ids: accountIds,
        page_token_sealed: page.pageAccessToken,
        user_token_sealed: userToken,
      })
  }
}

export interface PageUnsubscriptionDeps {
  db: Database
  graph: GraphSettings
  secretsKey: Buffer | undefined
  log: Logger
}

const opened = (key: Buffer | undefined, sealed: string | null) => {
  if (!key || !sealed) return undefined
  try {
    return openSecret(key, sealed)
  } catch {
    return undefined
  }
}

/**
 * Unsubscribes our app from a removed account's page (`DELETE /{page-id}/subscribed_apps`), unless a live
 * campaign of another account still uses the page. With the page token kept, else one read with the
 * account's user token. A page Graph no longer has counts as done; so does a page no token can reach any
 * more (logged), as nothing else could unsubscribe it.
 */
export async function unsubscribeRemovedPage(
  deps: PageUnsubscriptionDeps,
  job: PageUnsubscription,
): Promise<void> {
  const log = { account_id: job.account_id, page_id: job.page_id }
  if (await isPageUsedElsewhere(deps.db, job.page_id, job.account_ids)) {
    deps.log.info(log, 'page of a removed account kept subscribed: another account uses it')
    return
  }
  const userToken = opened(deps.secretsKey, job.user_token_sealed)
  let pageToken = opened(deps.secretsKey, job.page_token_sealed)
  if (!pageToken && userToken) pageToken = await getPageToken(deps.graph, job.page_id, userToken, deps.log)
  if (!pageToken) {
    deps.log.warn(log, 'page of a removed account left subscribed: no token can reach it')
    return
  }
  const unsubscribed = await unsubscribeAppFromPage(deps.graph, job.page_id, pageToken, deps.log)
  deps.log.info({ ...log, unsubscribed }, 'page of a removed account unsubscribed')
}
