import { and, desc, eq, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelDomains, funnelSteps, funnels } from './tables.js'

/*
 * The edge endpoints are not account-scoped: the edge worker serves every account's pages, found by
 * hostname (a domain belongs to one account) or by funnel id, and the step id it syncs.
 */

/** A step's funnel: the same account (every join of account-owned rows says so) and its id. */
const stepsFunnel = and(eq(funnels.accountId, funnelSteps.accountId), eq(funnels.id, funnelSteps.funnelId))

/** Where the edge looks: the live funnels on a domain, or one funnel whatever its host. */
export type EdgeSite = { hostname: string } | { funnelId: string }

/** The live funnels of `site` that may be served: active ones, or any status in preview. */
function servable(site: EdgeSite, preview: boolean): SQL | undefined {
  const onSite =
    'funnelId' in site
      ? eq(funnels.id, site.funnelId)
      : sql`exists (select 1 from ${funnelDomains} where ${funnelDomains.accountId} = ${funnels.accountId} and ${funnelDomains.id} = ${funnels.domainId}
        and lower(${funnelDomains.name}) = ${site.hostname})`
  return and(onSite, eq(funnels.deleted, false), preview ? undefined : eq(funnels.status, 'active'))
}

/**
 * The step served at one of `splits` (a funnel base path and a step path that together make the page's
 * path) on `site`; where two funnels of a domain both match, the one with the longer base path (the more
 * specific) wins.
 */
export async function findServedStep(
  db: Database,
  site: EdgeSite,
  splits: [basePath: string, stepPath: string][],
  preview: boolean,
) {
  const [found] = await db
    .select({
      stepId: funnelSteps.id,
      funnelId: funnelSteps.funnelId,
      html: funnelSteps.html,
      checksum: funnelSteps.checksum,
      seo: funnelSteps.seo,
      trackingCode: funnelSteps.trackingCode,
      css: funnelSteps.css,
    })
    .from(funnelSteps)
    .innerJoin(funnels, stepsFunnel)
    .where(
      and(
        servable(site, preview),
        sql`(${funnels.basePath}, ${funnelSteps.path}) in (${sql.join(
          splits.map(([basePath, stepPath]) => sql`(${basePath}, ${stepPath})`),
          sql`, `,
        )})`,
      ),
    )
    .orderBy(desc(sql`length(${funnels.basePath})`))
    .limit(1)
  return found
}

/** Whether `site` has a funnel that may be served (tells `Funnel not found` from `Step not found`). */
export async function hasServableFunnel(db: Database, site: EdgeSite, preview: boolean): Promise<boolean> {
  const [found] = await db.select({ id: funnels.id }).from(funnels).where(servable(site, preview)).limit(1)
  return found !== undefined
}

export interface HtmlSync {
  stepId: string
  html: string
  newHash: string
  currentHash: string | null
  skipIfUnchanged: boolean
}

/**
 * The optimistic hash check in one conditional update: applied only when the stored hash is still the
 * one the edge read (`IS NOT DISTINCT FROM`, so a never-synced step matches an absent hash), and, with
 * `skipIfUnchanged`, not when it already is the new one. Of two updates racing from the same hash the
 * row lock lets one through; the other re-reads the row, no longer matches, and updates nothing.
 * Answers the step's funnel when it updated.
 */
export async function updateStepHtmlIf(db: Database, sync: HtmlSync): Promise<string | undefined> {
  const [updated] = await db
    .update(funnelSteps)
    .set({ html: sync.html, checksum: sync.newHash, updatedAt: sql`now()` })
    .where(
      and(
        eq(funnelSteps.id, sync.stepId),
        sql`${funnelSteps.checksum} is not distinct from ${sync.currentHash}::text`,
        sync.skipIfUnchanged
          ? sql`${funnelSteps.checksum} is distinct from ${sync.newHash}::text`
          : undefined,
        sql`exists (select 1 from ${funnels} where ${stepsFunnel} and not ${funnels.deleted})`,
      ),
    )
    .returning({ funnelId: funnelSteps.funnelId })
  return updated?.funnelId
}

/** The stored hash of a step of a live funnel; undefined when there is no such step. */
export async function findStepChecksum(db: Database, stepId: string) {
  const [found] = await db
    .select({ checksum: funnelSteps.checksum })
    .from(funnelSteps)
    .innerJoin(funnels, stepsFunnel)
    .where(and(eq(funnelSteps.id, stepId), eq(funnels.deleted, false)))
  return found
}
