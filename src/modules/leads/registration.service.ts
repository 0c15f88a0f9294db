import { inTransaction } from '../../platform/db/transaction.js'
import { Invalid } from '../../platform/http/errors.js'
import { ProviderUnreachable } from '../../platform/providers/http-client.js'
import { ProviderUnavailable } from '../../platform/providers/provider-circuits.js'
import { findCampaign, setSubscriptionStatus } from './campaigns.repository.js'
import { pageTokenOf, requireConnection } from './connection.service.js'
import type { LeadsDeps } from './deps.js'
import { createPageWebhookSubscription, GraphError, getAppToken, subscribeAppToPage } from './graph.js'
import { type RegistrationRow, upsertRegistration } from './registration.repository.js'
import type { RegisterWebhookBody, WebhookRegistration } from './registration.schemas.js'

/**
 * The spec's "Webhook registration fails": errno 400 with the provider's message in `additional_info`. Every
 * failure of the registration answers it, Graph unreachable and the Meta app not configured included
 * (docs/decisions.md).
 */
export const ERROR_CREATING_WEBHOOK = 'ERROR_CREATING_WEBHOOK'
/** `additional_info.message` when no answer came from Graph at all. */
export const GRAPH_UNREACHABLE = 'Graph API could not be reached'

const registrationFailed = (additionalInfo: { message: string; type?: string; code?: number }) =>
  new Invalid(ERROR_CREATING_WEBHOOK, additionalInfo)
/** Where Meta verifies our callback (GET) and posts lead events (POST). */
export const LEADS_WEBHOOK_PATH = '/webhooks/socialnet/leads'

export interface RegistrationDeps extends LeadsDeps {
  /** PUBLIC_BASE_URL: the callback Meta is given is this plus LEADS_WEBHOOK_PATH. */
  publicBaseUrl: string
  /** SOCIALNET_VERIFY_TOKEN: Meta sends it back when it verifies the callback. */
  verifyToken: string | undefined
}

/** The caller as registration needs it: the account and the user who becomes the registration's owner. */
export interface Registrant {
  account_id: string
  uid?: string
}

const registrationView = (row: RegistrationRow): WebhookRegistration => ({
  _id: row.id,
  account_id: row.accountId,
  owner: row.owner,
  webhook_url: row.webhookUrl,
})

/**
 * The verify token; else the registration fails before Graph is called, its `additional_info` naming every
 * variable it needs and lacks, and the operator is told in the log at error level.
 */
function requireWebhookSettings(deps: RegistrationDeps): string {
  const unset = [
    ['SOCIALNET_APP_ID', deps.graph.appId],
    ['SOCIALNET_APP_SECRET', deps.graph.appSecret],
    ['SOCIALNET_VERIFY_TOKEN', deps.verifyToken],
  ].flatMap(([name, value]) => (value ? [] : [name]))
  if (unset.length === 0 && deps.verifyToken) return deps.verifyToken
  const message = `Lead ads webhooks are not configured: set ${unset.join(', ')}`
  deps.log.error({ unset }, message)
  throw registrationFailed({ message })
}

/**
 * Graph's failures as the spec answers them: a refusal (any Graph error, 190 included) with Graph's
 * `{ message, type, code }`; Graph not answering at all with a message saying so.
 */
async function withGraphFailures<T>(steps: () => Promise<T>): Promise<T> {
  try {
    return await steps()
  } catch (error) {
    if (error instanceof GraphError) throw registrationFailed(error.providerError)
    // Not reached, or not called while its circuit is open after failures: the spec answers both as a
    // failed registration, which the seller may try again.
    if (error instanceof ProviderUnreachable || error instanceof ProviderUnavailable)
      throw registrationFailed({ message: `${GRAPH_UNREACHABLE}: ${error.message}` })
    throw error
  }
}

/**
 * `POST /socialnet/accounts/webhook`. What needs no call to Graph is checked first: the campaign (not found
 * in the caller's account, or deleted: undefined, which the route answers `{ success: true }`), the stored
 * token (none: 400 `Record Not found!`) and the app's settings, so that these answers do not depend
 * on Graph. Then Graph's steps in the spec's order: the app token; the account's token (exchanged when
 * expired) and with it a fresh page token, kept on the campaign for lead capture; our app subscribed to the
 * page's `leadgen`; the app's `page` webhook subscription pointed at our callback. Then the registration,
 * stored once per campaign, and the campaign's subscription marked `subscribed`.
 */
export async function registerWebhook(
  deps: RegistrationDeps,
  registrant: Registrant,
  body: RegisterWebhookBody,
): Promise<WebhookRegistration | undefined> {
  const accountId = registrant.account_id
  const campaign = await findCampaign(deps.db, accountId, body.campaign_id)
  if (!campaign || campaign.isDeleted) return undefined
  await requireConnection(deps.db, accountId)
  const verifyToken = requireWebhookSettings(deps)
  const callbackUrl = `${deps.publicBaseUrl}${LEADS_WEBHOOK_PATH}`
  await withGraphFailures(async () => {
    const appToken = await getAppToken(deps.graph, deps.log)
    const pageToken = await pageTokenOf(deps, campaign, { fresh: true })
    await subscribeAppToPage(deps.graph, campaign.pageId, pageToken, deps.log)
    await createPageWebhookSubscription(deps.graph, { appToken, callbackUrl, verifyToken }, deps.log)
  })
  const row = await inTransaction(deps.db, async (tx) => {
    const stored = await upsertRegistration(tx, accountId, {
      campaignId: campaign.id,
      owner: registrant.uid || accountId,
      pageId: campaign.pageId,
      webhookUrl: callbackUrl,
    })
    await setSubscriptionStatus(tx, accountId, campaign.id, 'subscribed', null)
    return stored
  })
  deps.log.info(
    { account_id: accountId, campaign_id: campaign.id, page_id: campaign.pageId },
    'lead webhook registered',
  )
  return registrationView(row)
}
