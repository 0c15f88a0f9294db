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
  REVIEW_PLATFORMS,
  type ReviewPlatform,
  TRIGGER_TYPES,
  type TriggerType,
} from './documents.schemas.js'
import { platformsWithoutLink } from './review-links.service.js'
import { requireTemplate, TEMPLATE_NOT_FOUND } from './templates.service.js'

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
 * The configuration a `PUT` describes, whole: the spec's refusals in its table's order, each with its own
 * message, then the time zone. Fields left out are absent (null), ours back to their defaults.
 */
function replacement(caller: Caller, body: PutBody): ConfigurationValues {
  if (!isTrigger(body.trigger)) throw new Invalid(INVALID_TRIGGER_TYPE)
  const badPlatform = body.platforms.find((platform) => !isPlatform(platform))
  if (badPlatform !== undefined)
    throw new Invalid(`Invalid platform: ${badPlatform}. Allowed: ${REVIEW_PLATFORMS.join(', ')}`)
  const delayHours = delayHoursOf(body.delay_hours)
  if (body.timezone !== undefined && !isTimeZone(body.timezone))
    throw new Invalid('timezone must be an IANA time zone name, such as Europe/Paris')
  return {
    parentAccount: parentAccountOf(caller),
    name: body.name ?? DEFAULT_NAME,
    enabled: body.enabled,
    trigger: body.trigger,
    delayHours,
    platforms: [...new Set(body.platforms.filter(isPlatform))],
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

const missingLinkWarning = (platform: ReviewPlatform) =>
  `No review link for ${platform}: its requests are skipped (no_review_link) until one is added at /reviews/links`

/**
 * `PUT /reviews/auto-review-request`: the caller's configuration, created or replaced by the one sent; nothing
 * is stored when any field is refused. Platforms without a review link are accepted and named in `warnings`.
 */
export async function saveConfiguration(
  db: Database,
  caller: Caller,
  body: PutBody,
): Promise<{ configuration: Configuration; warnings: string[] }> {
  const values = replacement(caller, body)
  if (values.templateId) await requireTemplate(db, caller.account_id, values.templateId)
  const row = await upsertConfiguration(db, caller.account_id, values).catch((error: unknown) => {
    // The template was deleted between the check and the write.
    if (isForeignKeyViolation(error)) throw new NotFound(TEMPLATE_NOT_FOUND)
    throw error
  })
  const unlinked = await platformsWithoutLink(db, accountsInForce(caller), row.platforms)
  return { configuration: configurationView(row), warnings: unlinked.map(missingLinkWarning) }
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
