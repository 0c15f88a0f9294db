import { and, eq, inArray, isNull, max, min, ne, or } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { leads } from './tables.js'

/**
 * Where the campaign's sync reads from, before the overlap: the newest lead actually stored as captured, or
 * the oldest lead still waiting for its capture (received, or failed for a reason other than `unmendable`)
 * when one is older. Null when it has stored no lead: then every lead of the form is read.
 */
export async function syncStartsAfter(
  db: Database,
  accountId: string,
  campaignId: string,
  unmendable: string,
): Promise<Date | null> {
  const ofCampaign = and(eq(leads.accountId, accountId), eq(leads.campaignId, campaignId))
  const [captured, waiting] = await Promise.all([
    db
      .select({ time: max(leads.createdTime) })
      .from(leads)
      .where(and(ofCampaign, eq(leads.status, 'captured'))),
    db
      .select({ time: min(leads.createdTime) })
      .from(leads)
      .where(
        and(
          ofCampaign,
          inArray(leads.status, ['received', 'failed']),
          or(isNull(leads.reason), ne(leads.reason, unmendable)),
        ),
      ),
  ])
  const times = [captured[0]?.time, waiting[0]?.time].filter((time): time is Date => time instanceof Date)
  return times.length > 0 ? new Date(Math.min(...times.map((time) => time.getTime()))) : null
}
