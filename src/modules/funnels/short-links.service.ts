import { createHmac, hkdfSync, randomInt } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { isBotVisit } from '../../platform/http/visits.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { FUNNEL_NOT_FOUND, fullStepPath, requireFunnel } from './funnel-access.service.js'
import {
  dailyClicks,
  findLinkByCode,
  findLinkOfFunnel,
  findLinkTarget,
  insertClick,
  insertLink,
  lockLiveFunnel,
} from './short-links.repository.js'
import { CODE_PATTERN, MAX_SERIES_DAYS, type ShortLinkStats, type StatsQuery } from './short-links.schemas.js'

export const SHORT_LINK_NOT_FOUND = 'Short link not found'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const CODE_LENGTH = 6
/** 62^6 codes: a collision is rare, five in a row means something else is wrong. */
const CODE_ATTEMPTS = 5
const CODE = new RegExp(CODE_PATTERN)

/** 6 characters of 62, each drawn uniformly with the operating system's randomness. */
export function randomCode(): string {
  return Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
}

export const shortUrl = (publicBaseUrl: string, code: string) => `${publicBaseUrl}/s/${code}`

/**
 * The funnel's short link: made once, then the same link on every later call (`created` false). The
 * funnel's row is locked meanwhile, so concurrent calls make one link between them. A code another link
 * holds is refused by the unique key and drawn again.
 */
export async function shortenFunnel(
  db: Database,
  publicBaseUrl: string,
  accountId: string,
  funnelId: string,
  newCode: () => string = randomCode,
): Promise<{ url: string; created: boolean }> {
  await requireFunnel(db, accountId, funnelId)
  return inTransaction(db, async (tx) => {
    if (!(await lockLiveFunnel(tx, accountId, funnelId))) throw new NotFound(FUNNEL_NOT_FOUND)
    const existing = await findLinkOfFunnel(tx, accountId, funnelId)
    if (existing) return { url: shortUrl(publicBaseUrl, existing.code), created: false }
    for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
      const link = await insertLink(tx, accountId, funnelId, newCode())
      if (link) return { url: shortUrl(publicBaseUrl, link.code), created: true }
    }
    throw new Error(`no free short link code in ${CODE_ATTEMPTS} draws`)
  })
}

/**
 * The key of visitor hashes, derived from SECRETS_ENCRYPTION_KEY (generated into DATA_DIR in development,
 * required in production): a visitor is recognised across clicks, and no IP can be recovered from a hash.
 */
export function visitorHashKey(secretsKey: Buffer | undefined): Buffer {
  if (!secretsKey) throw new Error('SECRETS_ENCRYPTION_KEY is not set: short link visitors cannot be hashed')
  return Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'short link visitor', 32))
}

export interface Visit {
  ip: string
  userAgent: string | undefined
  referrer: string | undefined
}

/** Where a funnel is seen: its domain (https) at its first step's path, else the service's preview of it. */
function publicUrl(
  publicBaseUrl: string,
  target: { funnelId: string; basePath: string; domainName: string | null; firstStepPath: string | null },
): string {
  if (!target.domainName)
    return `${publicBaseUrl}/v1/funnels/preview?funnel_id=${encodeURIComponent(target.funnelId)}`
  const path = target.firstStepPath ? fullStepPath(target.basePath, target.firstStepPath) : target.basePath
  return `https://${target.domainName}${path}`
}

/**
 * `GET /s/:code`: the funnel's public URL, after recording the click (one write) with a keyed hash of the
 * visitor's IP and user agent; no user agent, or a bot's, is a bot.
 */
export async function followShortLink(
  db: Database,
  settings: { publicBaseUrl: string; visitorKey: Buffer },
  code: string,
  visit: Visit,
): Promise<string> {
  const target = CODE.test(code) ? await findLinkTarget(db, code) : undefined
  // A removed account's link leads nowhere and counts nothing, as an unknown code.
  if (!target || !(await isAccountServing(db, target.accountId, 'visit')))
    throw new NotFound(SHORT_LINK_NOT_FOUND)
  await insertClick(db, target.accountId, {
    linkId: target.linkId,
    at: new Date(),
    referrer: visit.referrer,
    userAgent: visit.userAgent,
    visitorHash: createHmac('sha256', settings.visitorKey)
      .update(`${visit.ip}\n${visit.userAgent ?? ''}`)
      .digest('base64url'),
    isBot: isBotVisit(visit.userAgent),
  })
  return publicUrl(settings.publicBaseUrl, target)
}

const DAY_MS = 86_400_000
const dayOf = (date: Date) => date.toISOString().slice(0, 10)

/** The series' days: `to` defaults to today (UTC), `from` to 29 days before `to`. */
function seriesDays(query: StatsQuery, now: Date): string[] {
  const to = Date.parse(query.to ?? dayOf(now))
  const from = query.from ? Date.parse(query.from) : to - 29 * DAY_MS
  if (from > to) throw new Invalid('from must not be after to')
  const days = (to - from) / DAY_MS + 1
  if (days > MAX_SERIES_DAYS) throw new Invalid(`from must be at most ${MAX_SERIES_DAYS} days before to`)
  return Array.from({ length: days }, (_, i) => dayOf(new Date(from + i * DAY_MS)))
}

/**
 * The caller's short link with its click totals and its clicks per day, both over the series' days, from
 * the daily roll-up alone: raw clicks older than their retention period are gone by then.
 */
export async function shortLinkStats(
  db: Database,
  publicBaseUrl: string,
  accountId: string,
  code: string,
  query: StatsQuery,
): Promise<ShortLinkStats> {
  const days = seriesDays(query, new Date())
  const link = await findLinkByCode(db, accountId, code)
  if (!link) throw new NotFound(SHORT_LINK_NOT_FOUND)
  const daily = await dailyClicks(db, accountId, link.id, days[0] as string, days.at(-1) as string)
  const byDay = new Map(daily.map((day) => [day.date, day]))
  const clicks = { total: 0, unique: 0, bots: 0 }
  for (const day of daily) {
    clicks.total += day.clicks
    clicks.unique += day.unique
    clicks.bots += day.bots
  }
  return {
    code: link.code,
    short_url: shortUrl(publicBaseUrl, link.code),
    funnel_id: link.funnelId,
    created_at: link.createdAt.toISOString(),
    clicks,
    series: days.map((date) => ({
      date,
      clicks: byDay.get(date)?.clicks ?? 0,
      unique: byDay.get(date)?.unique ?? 0,
    })),
  }
}
