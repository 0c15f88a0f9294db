import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { Database } from '../../platform/db/connection.js'
import { isForeignKeyViolation } from '../../platform/db/errors.js'
import { inTransaction } from '../../platform/db/transaction.js'
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

/** A configuration's values before its first `PUT` names them. */
const DEFAULTS = {
  name: 'Auto review request',
  enabled: false,
  trigger: 'order_completed',
  delayHours: 24,
  platforms: ['google'],
  templateId: null,
  conditions: null,
  sendMethod: 'email',
  fromEmail: null,
  fromPhone: null,
  followUp: null,
  sendWindow: null,
  timezone: 'UTC',
} satisfies Omit<ConfigurationValues, 'accountId' | 'parentAccount'>

/** The spec's refusals of a `trigger` and a `delay_hours`, word for word. */
export const INVALID_TRIGGER_TYPE = 'Invalid trigger type'
const DELAY_HOURS_MUST_BE_POSITIVE = 'Delay hours must be positive'

export const isTrigger = (value: string): value is TriggerType =>
  (TRIGGER_TYPES as readonly string[]).includes(value)
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

/** The spec's refusals, in its table's order, each with its own message; then the time zone. */
function assertValid(body: PutBody): void {
  if (body.trigger !== undefined && !isTrigger(body.trigger)) throw new Invalid(INVALID_TRIGGER_TYPE)
  const badPlatform = body.platforms?.find((platform) => !isPlatform(platform))
  if (badPlatform !== undefined)
    throw new Invalid(`Invalid platform: ${badPlatform}. Allowed: ${REVIEW_PLATFORMS.join(', ')}`)
  if (body.delay_hours !== undefined && body.delay_hours < 0) throw new Invalid(DELAY_HOURS_MUST_BE_POSITIVE)
  if (body.timezone !== undefined && !isTimeZone(body.timezone))
    throw new Invalid('timezone must be an IANA time zone name, such as Europe/Paris')
}

/** The body's fields over the stored ones (or the defaults): a `PUT` may name only what it changes. */
function mergedValues(
  caller: Caller,
  body: PutBody,
  stored: ConfigurationRow | undefined,
): ConfigurationValues {
  const base = stored ?? DEFAULTS
  return {
    accountId: caller.account_id,
    parentAccount: parentAccountOf(caller),
    name: body.name ?? base.name,
    enabled: body.enabled ?? base.enabled,
    trigger: (body.trigger as TriggerType | undefined) ?? base.trigger,
    delayHours: body.delay_hours ?? base.delayHours,
    platforms: [...new Set((body.platforms as ReviewPlatform[] | undefined) ?? base.platforms)],
    templateId: body.template_id === undefined ? base.templateId : body.template_id,
    conditions: body.conditions ?? base.conditions,
    sendMethod: body.send_method ?? base.sendMethod,
    fromEmail: body.from_email === undefined ? base.fromEmail : body.from_email,
    fromPhone: body.from_phone === undefined ? base.fromPhone : body.from_phone,
    followUp: body.follow_up === undefined ? base.followUp : body.follow_up,
    sendWindow: body.send_window === undefined ? base.sendWindow : body.send_window,
    timezone: body.timezone ?? base.timezone,
  }
}

const missingLinkWarning = (platform: ReviewPlatform) =>
  `No review link for ${platform}: its requests are skipped (no_review_link) until one is added at /reviews/links`

/**
 * `PUT /reviews/auto-review-request`: the caller's configuration, created or changed; nothing is stored
 * when any field is refused. Platforms without a review link are accepted and named in `warnings`.
 */
export async function saveConfiguration(
  db: Database,
  caller: Caller,
  body: PutBody,
): Promise<{ configuration: Configuration; warnings: string[] }> {
  assertValid(body)
  if (body.template_id) await requireTemplate(db, caller.account_id, body.template_id)
  const row = await inTransaction(db, async (tx) => {
    const values = mergedValues(caller, body, await findConfiguration(tx, caller.account_id))
    return upsertConfiguration(tx, values)
  }).catch((error: unknown) => {
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
