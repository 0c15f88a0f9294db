import { and, count, desc, eq, getTableColumns, gte, lt, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { containsPattern } from '../../platform/db/search.js'
import { funnelFormSubmissions, funnelSteps, funnels } from './tables.js'

export type SubmissionRow = typeof funnelFormSubmissions.$inferSelect
export type ListedSubmission = SubmissionRow & { stepName: string | null }

/**
 * What a public form post needs in one query: the live funnel's account (whoever posts, the funnel's id
 * names it) and whether the step is one of the funnel's steps. Undefined for an unknown or deleted funnel.
 */
export async function findFunnelForSubmission(
  db: Database,
  funnelId: string,
  stepId: string,
): Promise<{ accountId: string; hasStep: boolean } | undefined> {
  const [found] = await db
    .select({ accountId: funnels.accountId, stepId: funnelSteps.id })
    .from(funnels)
    .leftJoin(funnelSteps, and(eq(funnelSteps.funnelId, funnels.id), eq(funnelSteps.id, stepId)))
    .where(and(eq(funnels.id, funnelId), eq(funnels.deleted, false)))
  return found && { accountId: found.accountId, hasStep: found.stepId !== null }
}

export async function insertSubmission(
  db: Database,
  accountId: string,
  values: Omit<typeof funnelFormSubmissions.$inferInsert, 'accountId' | 'id' | 'submittedAt'>,
): Promise<{ id: string; submittedAt: Date }> {
  const [row] = await db
    .insert(funnelFormSubmissions)
    .values({ ...values, accountId })
    .returning({ id: funnelFormSubmissions.id, submittedAt: funnelFormSubmissions.submittedAt })
  return row as { id: string; submittedAt: Date }
}

export interface SubmissionFilter {
  search?: string
  /** Submitted at or after. */
  from?: Date
  /** Submitted before. */
  before?: Date
}

function filtered(accountId: string, funnelId: string, filter: SubmissionFilter): SQL[] {
  const where: SQL[] = [
    eq(funnelFormSubmissions.accountId, accountId),
    eq(funnelFormSubmissions.funnelId, funnelId),
  ]
  if (filter.from) where.push(gte(funnelFormSubmissions.submittedAt, filter.from))
  if (filter.before) where.push(lt(funnelFormSubmissions.submittedAt, filter.before))
  if (filter.search)
    where.push(
      sql`exists (select 1 from jsonb_each_text(${funnelFormSubmissions.fields}) as f(name, value) where f.value ilike ${containsPattern(filter.search)})`,
    )
  return where
}

const listed = { ...getTableColumns(funnelFormSubmissions), stepName: funnelSteps.name }
const newestFirst = [desc(funnelFormSubmissions.submittedAt), desc(funnelFormSubmissions.id)]

/** One page of a funnel's submissions, newest first, each with its step's name (null once deleted). */
export async function listSubmissions(
  db: Database,
  accountId: string,
  funnelId: string,
  page: SubmissionFilter & { offset: number; limit: number },
): Promise<{ rows: ListedSubmission[]; total: number }> {
  const where = and(...filtered(accountId, funnelId, page))
  const [rows, [totals]] = await Promise.all([
    db
      .select(listed)
      .from(funnelFormSubmissions)
      .leftJoin(funnelSteps, eq(funnelSteps.id, funnelFormSubmissions.stepId))
      .where(where)
      .orderBy(...newestFirst)
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(funnelFormSubmissions).where(where),
  ])
  return { rows, total: totals?.total ?? 0 }
}

/**
 * The next `limit` submissions, newest first, after the one with id `afterId` (the last of the previous
 * batch): a keyset on (submitted_at, id), so that each batch costs the same however far the export has
 * gone. The bound is read in SQL, as stored (microseconds), not through a JavaScript date (milliseconds).
 */
export function nextSubmissions(
  db: Database,
  accountId: string,
  funnelId: string,
  filter: SubmissionFilter & { afterId?: string; limit: number },
): Promise<SubmissionRow[]> {
  const where = filtered(accountId, funnelId, filter)
  const s = funnelFormSubmissions
  if (filter.afterId)
    where.push(
      sql`(${s.submittedAt}, ${s.id}) < (select b.submitted_at, b.id from ${s} b where b.id = ${filter.afterId})`,
    )
  return db
    .select()
    .from(s)
    .where(and(...where))
    .orderBy(...newestFirst)
    .limit(filter.limit)
}
