import { and, asc, eq, gte, lte, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import {
  funnelDomains,
  funnelShortLinkClicks,
  funnelShortLinkDailyClicks,
  funnelShortLinks,
  funnelSteps,
  funnels,
} from './tables.js'

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
  at: Date
  referrer: string | undefined
  userAgent: string | undefined
  visitorHash: string
  isBot: boolean
}

/**
 * One statement: the click, flagged `is_repeat` when the visitor clicked the link within the hour before
 * (two clicks at the same instant may both count as first: a harmless miss), and added to its UTC day's
 * roll-up, which the statistics read, so they outlive the raw clicks' retention.
 */
export async function insertClick(db: Database, accountId: string, click: Click): Promise<void> {
  const c = funnelShortLinkClicks
  const d = funnelShortLinkDailyClicks
  await db.execute(sql`
    with click as (
      insert into ${c} (id, account_id, link_id, clicked_at, referrer, user_agent, visitor_hash, is_bot, is_repeat)
      select ${newId()}, ${accountId}, ${click.linkId}, ${click.at}, ${click.referrer ?? null},
        ${click.userAgent ?? null}, ${click.visitorHash}, ${click.isBot},
        exists (select 1 from ${c} where ${c.accountId} = ${accountId} and ${c.linkId} = ${click.linkId}
          and ${c.visitorHash} = ${click.visitorHash} and ${c.clickedAt} > ${click.at}::timestamptz - interval '1 hour')
      returning clicked_at, is_bot, is_repeat)
    insert into ${d} (account_id, link_id, day, clicks, unique_clicks, bots)
    select ${accountId}, ${click.linkId}, (clicked_at at time zone 'UTC')::date, 1,
      (not is_bot and not is_repeat)::int, is_bot::int
    from click
    on conflict (account_id, link_id, day) do update set clicks = ${d.clicks} + excluded.clicks,
      unique_clicks = ${d.uniqueClicks} + excluded.unique_clicks, bots = ${d.bots} + excluded.bots`)
}

/** The link's clicks per UTC day from `first` to `last` (`YYYY-MM-DD`), only days that have some. */
export function dailyClicks(db: Database, accountId: string, linkId: string, first: string, last: string) {
  const d = funnelShortLinkDailyClicks
  return db
    .select({ date: d.day, clicks: d.clicks, unique: d.uniqueClicks, bots: d.bots })
    .from(d)
    .where(and(eq(d.accountId, accountId), eq(d.linkId, linkId), gte(d.day, first), lte(d.day, last)))
}
