import { openSecret, sealSecret } from '../../platform/crypto/secret-box.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Invalid, Unavailable } from '../../platform/http/errors.js'
import {
  type CampaignRow,
  markAccountCampaignsDeleted,
  setCampaignPageToken,
} from './campaigns.repository.js'
import {
  findLiveToken,
  markLiveTokenInvalid,
  replaceLiveToken,
  softDeleteLiveToken,
  type TokenRow,
  upsertLiveToken,
} from './connection.repository.js'
import type { Disconnected, StoreTokenBody, TokenRecord } from './connection.schemas.js'
import type { LeadsDeps } from './deps.js'
import { exchangeForLongLivedToken, GraphError, getPageToken } from './graph.js'
import { notifyAccount, SOCIALNET_DISCONNECTED, SOCIALNET_TOKEN_INVALID } from './notifications.service.js'
import { SOCIALNET_LEADS } from './tables.js'

export const RECORD_NOT_FOUND = 'Record Not found!'

/** The spec's "Social token missing" (errno 400 `Record Not found!`): no live token of the source. */
export class SocialTokenMissing extends Invalid {
  constructor() {
    super(RECORD_NOT_FOUND)
  }
}

function sealingKey(deps: Pick<LeadsDeps, 'secretsKey'>): Buffer {
  if (!deps.secretsKey) throw new Unavailable('SECRETS_ENCRYPTION_KEY is not set: tokens cannot be kept')
  return deps.secretsKey
}

const expiryOf = (expiresIn: number, from = new Date()) =>
  expiresIn > 0 ? new Date(from.getTime() + expiresIn * 1000) : null

const tokenView = (row: TokenRow): TokenRecord => ({
  _id: row.id,
  account_id: row.accountId,
  created_by: row.createdBy,
  source: row.source,
  token: { token_type: 'bearer', expires_in: row.expiresIn },
  status: row.status,
  invalid_reason: row.invalidReason,
  expires_at: row.expiresAt?.toISOString() ?? null,
  deleted: row.deleted?.toISOString() ?? null,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/**
 * `POST /socialnet/auth/token`: keeps the account's connected token, sealed (never returned or logged). A
 * new `socialnet-leads` token also queues, in the same transaction, the leads that waited for one
 * (`queueLeadsWaitingForToken`, the capture's: how many).
 */
export async function storeToken(
  deps: Pick<LeadsDeps, 'db' | 'log' | 'secretsKey'> & {
    queueLeadsWaitingForToken: (tx: Database, accountId: string) => Promise<number>
  },
  auth: { account_id: string; uid: string },
  body: StoreTokenBody,
): Promise<TokenRecord> {
  const sealed = sealSecret(sealingKey(deps), body.access_token)
  return inTransaction(deps.db, async (tx) => {
    const row = await upsertLiveToken(tx, auth.account_id, {
      source: body.source,
      createdBy: auth.uid,
      accessToken: sealed,
      expiresIn: body.expires_in,
      expiresAt: expiryOf(body.expires_in),
    })
    if (body.source === SOCIALNET_LEADS) {
      const queued = await deps.queueLeadsWaitingForToken(tx, auth.account_id)
      if (queued > 0)
        deps.log.info(
          { account_id: auth.account_id, leads: queued },
          'leads waiting for a token queued again',
        )
    }
    return tokenView(row)
  })
}

/** The spec's 400 `Record Not found!` when the account has no `socialnet-leads` token stored. */
export async function requireConnection(db: Database, accountId: string): Promise<void> {
  if (!(await findLiveToken(db, accountId, SOCIALNET_LEADS))) throw new SocialTokenMissing()
}

/**
 * The account's `socialnet-leads` user token, in plain text; exchanged for a long-lived one first when it
 * has expired (`grant_type=fb_exchange_token`). The spec's 400 `Record Not found!` when none is stored.
 */
export async function connectedUserToken(deps: LeadsDeps, accountId: string): Promise<string> {
  const record = await findLiveToken(deps.db, accountId, SOCIALNET_LEADS)
  if (!record) throw new SocialTokenMissing()
  const key = sealingKey(deps)
  let token: string
  try {
    token = openSecret(key, record.accessToken)
  } catch {
    // Sealed under another SECRETS_ENCRYPTION_KEY: as good as missing until the account connects again.
    throw new SocialTokenMissing()
  }
  if (!record.expiresAt || record.expiresAt > new Date()) return token
  const exchanged = await exchangeForLongLivedToken(deps.graph, token, deps.log).catch((error: unknown) =>
    rejectToken(deps, accountId, error),
  )
  await replaceLiveToken(deps.db, accountId, record.id, {
    accessToken: sealSecret(key, exchanged.access_token),
    expiresIn: exchanged.expires_in,
    expiresAt: expiryOf(exchanged.expires_in),
  })
  deps.log.info({ account_id: accountId }, 'expired socialnet token exchanged for a long-lived one')
  return exchanged.access_token
}

/** Marks the account's token invalid when Graph said so (190), then rethrows Graph's refusal. */
async function rejectToken(deps: LeadsDeps, accountId: string, error: unknown): Promise<never> {
  if (error instanceof GraphError && error.tokenInvalid)
    await markTokenInvalid(deps, accountId, error.graphMessage)
  throw error
}

/**
 * Graph refused the account's token (code 190): it is marked invalid with Graph's reason and the account is
 * told once (a platform event and the app webhook `socialnet.token_invalid`).
 */
export async function markTokenInvalid(deps: LeadsDeps, accountId: string, reason: string): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const wasValid = await markLiveTokenInvalid(tx, accountId, SOCIALNET_LEADS, reason)
    if (!wasValid) return
    deps.log.warn({ account_id: accountId }, 'socialnet token refused by Graph (190); marked invalid')
    await notifyAccount(deps, tx, accountId, SOCIALNET_TOKEN_INVALID, {
      source: SOCIALNET_LEADS,
      reason,
    })
  })
}

/**
 * The page token of the campaign's page: the one kept with the campaign, or one read with the account's
 * user token and kept (sealed). `fresh` reads it again, after Graph refused the kept one.
 */
export async function pageTokenOf(
  deps: LeadsDeps,
  campaign: Pick<CampaignRow, 'id' | 'accountId' | 'pageId' | 'pageAccessToken'>,
  options: { fresh?: boolean } = {},
): Promise<string> {
  const key = sealingKey(deps)
  if (campaign.pageAccessToken && !options.fresh) {
    try {
      return openSecret(key, campaign.pageAccessToken)
    } catch {
      // Sealed under another key: read a new one below.
    }
  }
  const userToken = await connectedUserToken(deps, campaign.accountId)
  const pageToken = await getPageToken(deps.graph, campaign.pageId, userToken, deps.log).catch(
    (error: unknown) => rejectToken(deps, campaign.accountId, error),
  )
  await setCampaignPageToken(deps.db, campaign.accountId, campaign.id, sealSecret(key, pageToken))
  return pageToken
}

/**
 * `DELETE /socialnet/auth/delete?source=`: the spec's disconnect. The token gets `deleted`; for
 * `socialnet-leads` the account's `socialnet_ads` campaigns are marked `is_deleted`; the account is told
 * (a platform event and the app webhook `socialnet.disconnected`).
 */
export async function disconnect(deps: LeadsDeps, accountId: string, source: string): Promise<Disconnected> {
  return inTransaction(deps.db, async (tx) => {
    const row = await softDeleteLiveToken(tx, accountId, source)
    if (!row?.deleted) throw new SocialTokenMissing()
    const campaignsDeleted = source === SOCIALNET_LEADS ? await markAccountCampaignsDeleted(tx, accountId) : 0
    const disconnected = { source, deleted: row.deleted.toISOString(), campaigns_deleted: campaignsDeleted }
    await notifyAccount(deps, tx, accountId, SOCIALNET_DISCONNECTED, disconnected)
    deps.log.info(
      { account_id: accountId, source, campaigns_deleted: campaignsDeleted },
      'socialnet disconnected',
    )
    return disconnected
  })
}

/**
 * Runs a Graph call with the campaign's page token. When Graph refuses a kept page token (190) it is read
 * again once with the user token; a refusal of that one too marks the account's token invalid.
 */
export async function withPageToken<T>(
  deps: LeadsDeps,
  campaign: Pick<CampaignRow, 'id' | 'accountId' | 'pageId' | 'pageAccessToken'>,
  call: (pageToken: string) => Promise<T>,
): Promise<T> {
  for (let fresh = !campaign.pageAccessToken; ; fresh = true) {
    try {
      return await call(await pageTokenOf(deps, campaign, { fresh }))
    } catch (error) {
      if (!(error instanceof GraphError && error.tokenInvalid)) throw error
      if (fresh) {
        await markTokenInvalid(deps, campaign.accountId, error.graphMessage)
        throw error
      }
    }
  }
}
