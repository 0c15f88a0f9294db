import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { Database } from '../../platform/db/connection.js'
import { isForeignKeyViolation } from '../../platform/db/errors.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import {
  type ConfigurationRow,
  type ConfigurationValues,
  findConfiguration,
  listConfigurations,
  upsertConfiguration,
} from './configuration.repository.js'
import type { Configuration, ListQuery, PutBody } from './configuration.schemas.js'
import {
  MAX_DELAY_HOURS,
  ORDER_TRIGGER,
  REVIEW_PLATFORMS,
  type ReviewPlatform,
  type SendWindow,
  TRIGGER_TYPES,
  type TriggerType,
} from './documents.schemas.js'
import { hasClaimedLocation } from './order-locations.service.js'
import { platformsWithoutLink } from './review-links.service.js'
import { requireTemplate, TEMPLATE_NOT_FOUND } from './templates.service.js'
import { hasEventWithTrigger } from './webhook-events.repository.js'

type Caller = Pick<AuthContext, 'account_id' | 'parent_account'>

/** The spec's `parentAccount`: the caller's `parent_account`, or else its own `account_id`. */
export const parentAccountOf = (caller: Caller) => caller.parent_account ?? caller.account_id

/** The accounts whose configuration (and review links) apply to the caller: its own, then its parent's. */
export const accountsInForce = (caller: Caller) =>
  caller.parent_account ? [caller.account_id, caller.parent_account] : [caller.account_id]

export const configurationView = (row: ConfigurationRow): Configuration => ({
  _id: row.id,
  account_id: row.accountId,
  parentAccount: row.parentAccount,
  name: row.name,
  enabled: row.enabled,
  trigger: row.trigger,
  delay_hours: row.delayHours,
  platforms: row.platforms,
  template_id: row.templateId,
  conditions: row.conditions ?? {},
  send_method: row.sendMethod,
  from_email: row.fromEmail,
  from_phone: row.fromPhone,
  follow_up: row.followUp,
  send_window: row.sendWindow,
  timezone: row.timezone,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** Our own fields' values when a `PUT` leaves them out. */
const DEFAULT_NAME = 'Auto review request'
const DEFAULT_TIMEZONE = 'UTC'

/** The spec's refusals of a `trigger` and a `delay_hours`, word for word. */
export const INVALID_TRIGGER_TYPE = 'Invalid trigger type'
const DELAY_HOURS_MUST_BE_POSITIVE = 'Delay hours must be positive'

export const isTrigger = (value: unknown): value is TriggerType =>
  typeof value === 'string' && (TRIGGER_TYPES as readonly string[]).includes(value)
const isPlatform = (value: string): value is ReviewPlatform =>
  (REVIEW_PLATFORMS as readonly string[]).includes(value)

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name })
    return true
  } catch {
    return false
  }
}

/** The delay in hours: any value but a number from 0 is refused with the spec's words. */
function delayHoursOf(value: unknown): number {
  if (typeof value !== 'number' || value < 0) throw new Invalid(DELAY_HOURS_MUST_BE_POSITIVE)
  if (value > MAX_DELAY_HOURS) throw new Invalid(`delay_hours must be at most ${MAX_DELAY_HOURS}`)
  return value
}

/**
 * The spec's refusals, in its table's order (trigger, platform, delay), of the fields a `PUT` body has, each
 * with its own message. The route runs it before the schema, so that a body leaving out another required
 * field still answers a wrong trigger, platform or delay with the spec's words.
 */
export function refuseInvalidFields(body: unknown): void {
  if (typeof body !== 'object' || body === null) return
  const fields = body as Record<string, unknown>
  if ('trigger' in fields && !isTrigger(fields.trigger)) throw new Invalid(INVALID_TRIGGER_TYPE)
  const platforms = Array.isArray(fields.platforms) ? fields.platforms : []
  const badPlatform = platforms.find((platform) => typeof platform === 'string' && !isPlatform(platform))
  if (badPlatform !== undefined)
    throw new Invalid(`Invalid platform: ${badPlatform}. Allowed: ${REVIEW_PLATFORMS.join(', ')}`)
  if ('delay_hours' in fields) delayHoursOf(fields.delay_hours)
}

/**
 * The configuration a `PUT` describes, whole: the spec's refusals, then the time zone. Fields left out are
 * absent (null), ours back to their defaults.
 */
function replacement(caller: Caller, body: PutBody): ConfigurationValues {
  refuseInvalidFields(body)
  if (body.timezone !== undefined && !isTimeZone(body.timezone))
    throw new Invalid('timezone must be an IANA time zone name, such as Europe/Paris')
  return {
    parentAccount: parentAccountOf(caller),
    name: body.name ?? DEFAULT_NAME,
    enabled: body.enabled,
    // Each refused above unless valid.
    trigger: body.trigger as TriggerType,
    delayHours: body.delay_hours as number,
    platforms: [...new Set(body.platforms as ReviewPlatform[])],
    templateId: body.template_id ?? null,
    conditions: body.conditions ?? null,
    sendMethod: body.send_method,
    fromEmail: body.from_email ?? null,
    fromPhone: body.from_phone ?? null,
    followUp: body.follow_up ?? null,
    sendWindow: body.send_window ?? null,
    timezone: body.timezone ?? DEFAULT_TIMEZONE,
  }
}

/** Which providers' webhooks this server can verify, so that their events reach the reviews at all. */
export interface ProviderWebhooks {
  /** STRIPE_WEBHOOK_SECRET is set. */
  stripe: boolean
  /** SQUARE_WEBHOOK_SIGNATURE_KEY is set. */
  square: boolean
}

const missingLinkWarning = (platform: ReviewPlatform) =>
  `No review link for ${platform}: its requests are skipped (no_review_link) until one is added at /reviews/links`

/** Why nothing can send order_completed to the account, each missing source with what to do; null when one can. */
async function missingOrderSources(db: Database, accountId: string, webhooks: ProviderWebhooks) {
  if (webhooks.stripe) return null
  if (webhooks.square && (await hasClaimedLocation(db, accountId))) return null
  const square = webhooks.square
    ? 'no Square location is claimed (POST /reviews/orderprovider/locations)'
    : 'this server receives no Square orders (SQUARE_WEBHOOK_SIGNATURE_KEY is unset)'
  return `${square}, this server receives no Stripe payments (STRIPE_WEBHOOK_SECRET is unset), and no order was reported by POST /reviews/events`
}

/**
 * The trigger, when nothing connected sends it: payments and orders only ever report order_completed, the
 * other triggers come only from the account's own POST /reviews/events. An event of the trigger ever
 * received for the account shows a source.
 */
async function silentTriggerWarning(
  db: Database,
  accountId: string,
  trigger: TriggerType,
  webhooks: ProviderWebhooks,
): Promise<string | null> {
  if (await hasEventWithTrigger(db, accountId, trigger)) return null
  if (trigger !== ORDER_TRIGGER)
    return `No ${trigger} event was ever reported for this account: payments and orders only report ${ORDER_TRIGGER}, so ${trigger} comes only from your own systems, by POST /reviews/events with "trigger": "${trigger}"; until one is, no request is scheduled`
  const missing = await missingOrderSources(db, accountId, webhooks)
  return (
    missing &&
    `Nothing sends ${ORDER_TRIGGER} for this account yet: ${missing}; until one does, no request is scheduled`
  )
}

/** A window whose start is its end, which is read as open all day (nextSendWindowOpening). */
const allDayWindowWarning = (window: SendWindow | null) =>
  window && window.start === window.end
    ? `send_window starts and ends at ${window.start}: that is read as open all day, so no request is held; leave send_window out to send at any hour, or give the hours requests may go out (an end before the start spans midnight)`
    : null

/** What will visibly keep the saved configuration from sending as its owner expects. */
async function warningsOf(db: Database, caller: Caller, row: ConfigurationRow, webhooks: ProviderWebhooks) {
  const unlinked = await platformsWithoutLink(db, accountsInForce(caller), row.platforms)
  const silent = await silentTriggerWarning(db, caller.account_id, row.trigger, webhooks)
  return [...unlinked.map(missingLinkWarning), silent, allDayWindowWarning(row.sendWindow)].filter(
    (warning): warning is string => warning !== null,
  )
}

/**
 * `PUT /reviews/auto-review-request`: the caller's configuration, created or replaced by the one sent; nothing
 * is stored when any field is refused. What will keep it from sending is accepted and said in `warnings`: a
 * platform without a review link, a trigger nothing connected sends, a send window read as open all day.
 */
export async function saveConfiguration(
  db: Database,
  caller: Caller,
  body: PutBody,
  webhooks: ProviderWebhooks,
): Promise<{ configuration: Configuration; warnings: string[] }> {
  const values = replacement(caller, body)
  if (values.templateId) await requireTemplate(db, caller.account_id, values.templateId)
  const row = await upsertConfiguration(db, caller.account_id, values).catch((error: unknown) => {
    // The template was deleted between the check and the write.
    if (isForeignKeyViolation(error)) throw new NotFound(TEMPLATE_NOT_FOUND)
    throw error
  })
  return { configuration: configurationView(row), warnings: await warningsOf(db, caller, row, webhooks) }
}

/** The configuration in force for an account: its own, or else its parent's (the spec's fallback). */
export async function configurationInForce(
  db: Database,
  caller: Caller,
): Promise<ConfigurationRow | undefined> {
  const own = await findConfiguration(db, caller.account_id)
  if (own || !caller.parent_account) return own
  return findConfiguration(db, caller.parent_account)
}

/** `GET /reviews/auto-review-request`: skip = (page-1) × limit when page > 0, else 0 (the spec's rule). */
export async function listConfigurationsInForce(db: Database, caller: Caller, query: ListQuery) {
  const owner = (await configurationInForce(db, caller))?.accountId ?? caller.account_id
  const offset = query.page > 0 ? (query.page - 1) * query.limit : 0
  const { rows, total } = await listConfigurations(db, owner, { ...query, offset })
  return {
    configs: rows.map(configurationView),
    pagination: { page: query.page, limit: query.limit, total },
  }
}
