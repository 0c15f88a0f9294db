import { and, desc, eq, getTableColumns, gte, lt, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { containsPattern } from '../../platform/db/search.js'
import { funnelFormSubmissions, funnelSteps, funnels } from './tables.js'

export type SubmissionRow = typeof funnelFormSubmissions.$inferSelect
export type ListedSubmission = SubmissionRow & { stepName: string | null }

const value = (name: string) => sql.placeholder(name)

const funnelForSubmission = preparedStatement<{ account_id: string; has_step: boolean }>(
  'funnel_form_submission_funnel',
  sql`select f.account_id, exists (
      select 1 from ${funnelSteps} s
      where s.account_id = f.account_id and s.funnel_id = f.id and s.id = ${value('stepId')}
    ) as has_step
    from ${funnels} f where f.id = ${value('funnelId')} and not f.deleted`,
)

/**
 * What a public form post needs in one query: the live funnel's account (whoever posts, the funnel's id
 * names it) and whether the step is one of the funnel's steps. Undefined for an unknown or deleted funnel.
 */
export async function findFunnelForSubmission(
  db: Database,
  funnelId: string,
  stepId: string,
): Promise<{ accountId: string; hasStep: boolean } | undefined> {
  const [found] = await funnelForSubmission(db, { funnelId, stepId })
  return found && { accountId: found.account_id, hasStep: found.has_step }
}

const submissionInsert = preparedStatement(
  'funnel_form_submission_insert',
  sql`insert into ${funnelFormSubmissions}
    (id, account_id, funnel_id, step_id, form_id, fields, visitor_id, ip_address, user_agent, contact_id, submitted_at)
    values (${value('id')}, ${value('accountId')}, ${value('funnelId')}, ${value('stepId')}, ${value('formId')},
      ${value('fields')}::jsonb, ${value('visitorId')}, ${value('ipAddress')}, ${value('userAgent')},
      ${value('contactId')}, ${value('submittedAt')}::timestamptz)`,
)

export interface NewSubmission {
  funnelId: string
  stepId: string
  formId: string
  fields: Record<string, string>
  visitorId: string | undefined
  ipAddress: string
  userAgent: string | undefined
  contactId: string | null
}

/** Form posts are the module's hottest write: one prepared statement, its id and time made here. */
export async function insertSubmission(
  db: Database,
  accountId: string,
  submission: NewSubmission,
): Promise<{ id: string; submittedAt: Date }> {
  const id = newId()
  const submittedAt = new Date()
  await submissionInsert(db, {
    ...submission,
    id,
    accountId,
    fields: JSON.stringify(submission.fields),
    visitorId: submission.visitorId ?? null,
    userAgent: submission.userAgent ?? null,
    submittedAt: submittedAt.toISOString(),
  })
  return { id, submittedAt }
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

/** A funnel's submissions, newest first. */
export const submissionsList = keysetList(
  'form_submissions',
  funnelFormSubmissions.submittedAt,
  funnelFormSubmissions.id,
)
const listed = {
  ...getTableColumns(funnelFormSubmissions),
  stepName: funnelSteps.name,
  ...placeField(submissionsList),
}
const newestFirst = [desc(funnelFormSubmissions.submittedAt), desc(funnelFormSubmissions.id)]

/** One page of a funnel's submissions, newest first, each with its step's name (null once deleted). */
export async function listSubmissions(
  db: Database,
  accountId: string,
  funnelId: string,
  page: SubmissionFilter & ListWindow,
) {
  const where = and(...filtered(accountId, funnelId, page))
  return selectListPage(
    db,
    db
      .select(listed)
      .from(funnelFormSubmissions)
      .leftJoin(
        funnelSteps,
        and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.id, funnelFormSubmissions.stepId)),
      )
      .$dynamic(),
    { ...submissionsList, from: funnelFormSubmissions, where },
    page,
  )
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
      sql`(${s.submittedAt}, ${s.id}) < (select b.submitted_at, b.id from ${s} b
        where b.account_id = ${accountId} and b.funnel_id = ${funnelId} and b.id = ${filter.afterId})`,
    )
  return db
    .select()
    .from(s)
    .where(and(...where))
    .orderBy(...newestFirst)
    .limit(filter.limit)
}
