import { and, asc, count, eq, gte, lt, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { funnelDomains, funnelShortLinkClicks, funnelShortLinks, funnelSteps, funnels } from './tables.js'

export type ShortLinkRow = typeof funnelShortLinks.$inferSelect

/**
 * Locks the account's live funnel until the transaction ends, so that two concurrent shortens of it
 * create one link between them. False when there is no such funnel (any more).
 */
export async function lockLiveFunnel(tx: Database, accountId: string, funnelId: string): Promise<boolean> {
  const rows = await tx
    .select({ id: funnels.id })
    .from(funnels)
    .where(and(eq(funnels.accountId, accountId), eq(funnels.id, funnelId), eq(funnels.deleted, false)))
    .for('update')
  return rows.length === 1
}

export async function findLinkOfFunnel(db: Database, accountId: string, funnelId: string) {
  const [row] = await db
    .select()
    .from(funnelShortLinks)
    .where(and(eq(funnelShortLinks.accountId, accountId), eq(funnelShortLinks.funnelId, funnelId)))
    .orderBy(asc(funnelShortLinks.id))
    .limit(1)
  return row
}

/** The new link, or undefined when another link holds the code (its unique key refused it). */
export async function insertLink(
  tx: Database,
  accountId: string,
  funnelId: string,
  code: string,
): Promise<ShortLinkRow | undefined> {
  const [row] = await tx
    .insert(funnelShortLinks)
    .values({ accountId, funnelId, code })
    .onConflictDoNothing({ target: funnelShortLinks.code })
    .returning()
  return row
}

/** The join of a link to its funnel, while that funnel is live (not soft-deleted). */
const linkedLiveFunnel = and(
  eq(funnels.accountId, funnelShortLinks.accountId),
  eq(funnels.id, funnelShortLinks.funnelId),
  eq(funnels.deleted, false),
)

/** The account's link with this code, while its funnel is live. */
export async function findLinkByCode(db: Database, accountId: string, code: string) {
  const [row] = await db
    .select({ link: funnelShortLinks })
    .from(funnelShortLinks)
    .innerJoin(funnels, linkedLiveFunnel)
    .where(and(eq(funnelShortLinks.accountId, accountId), eq(funnelShortLinks.code, code)))
  return row?.link
}

/**
 * Where a code leads, in one query: its link, its live funnel's base path and domain, and the path of
 * the funnel's first step (by order). Undefined for an unknown code or a deleted funnel.
 */
export async function findLinkTarget(db: Database, code: string) {
  const [row] = await db
    .select({
      linkId: funnelShortLinks.id,
      accountId: funnelShortLinks.accountId,
      funnelId: funnels.id,
      basePath: funnels.basePath,
      domainName: funnelDomains.name,
      firstStepPath: sql<string | null>`(select ${funnelSteps.path} from ${funnelSteps}
        where ${funnelSteps.accountId} = ${funnels.accountId} and ${funnelSteps.funnelId} = ${funnels.id}
        order by ${funnelSteps.order}, ${funnelSteps.id} limit 1)`,
    })
    .from(funnelShortLinks)
    .innerJoin(funnels, linkedLiveFunnel)
    .leftJoin(
      funnelDomains,
      and(eq(funnelDomains.accountId, funnels.accountId), eq(funnelDomains.id, funnels.domainId)),
    )
    .where(eq(funnelShortLinks.code, code))
  return row
}

export interface Click {
  linkId: string
  referrer: string | undefined
  userAgent: string | undefined
  visitorHash: string
  isBot: boolean
}

/**
 * One write: the click, flagged `is_repeat` in the same statement when the visitor clicked the link
 * within the last hour (two clicks at the same instant may both count as first: a harmless miss).
 */
export async function insertClick(db: Database, accountId: string, click: Click): Promise<void> {
  const c = funnelShortLinkClicks
  await db.execute(sql`
    insert into ${c} (id, account_id, link_id, referrer, user_agent, visitor_hash, is_bot, is_repeat)
    select ${newId()}, ${accountId}, ${click.linkId}, ${click.referrer ?? null}, ${click.userAgent ?? null},
      ${click.visitorHash}, ${click.isBot},
      exists (select 1 from ${c} where ${c.accountId} = ${accountId} and ${c.linkId} = ${click.linkId}
        and ${c.visitorHash} = ${click.visitorHash} and ${c.clickedAt} > now() - interval '1 hour')`)
}

const people = sql`not ${funnelShortLinkClicks.isBot} and not ${funnelShortLinkClicks.isRepeat}`

/** The link's clicks from `from` to before `before`, on the (link, time) index. */
function clicksWithin(accountId: string, linkId: string, from: Date, before: Date) {
  return and(
    eq(funnelShortLinkClicks.accountId, accountId),
    eq(funnelShortLinkClicks.linkId, linkId),
    gte(funnelShortLinkClicks.clickedAt, from),
    lt(funnelShortLinkClicks.clickedAt, before),
  )
}

/** The link's clicks from `from` to before `before`: every one, people's first in an hour, bots'. */
export async function clickTotals(db: Database, accountId: string, linkId: string, from: Date, before: Date) {
  const [totals] = await db
    .select({
      total: count(),
      unique: sql<number>`(count(*) filter (where ${people}))::int`,
      bots: sql<number>`(count(*) filter (where ${funnelShortLinkClicks.isBot}))::int`,
    })
    .from(funnelShortLinkClicks)
    .where(clicksWithin(accountId, linkId, from, before))
  return totals ?? { total: 0, unique: 0, bots: 0 }
}

/** The link's clicks per UTC day from `from` to before `before`, only days that have some. */
export function dailyClicks(db: Database, accountId: string, linkId: string, from: Date, before: Date) {
  const day = sql<string>`to_char(${funnelShortLinkClicks.clickedAt} at time zone 'UTC', 'YYYY-MM-DD')`
  return db
    .select({ date: day, clicks: count(), unique: sql<number>`(count(*) filter (where ${people}))::int` })
    .from(funnelShortLinkClicks)
    .where(clicksWithin(accountId, linkId, from, before))
    .groupBy(day)
}
