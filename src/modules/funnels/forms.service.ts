import type { Readable } from 'node:stream'
import type { Database } from '../../platform/db/connection.js'
import { isId, newId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Changes } from '../../platform/events/changes.js'
import { csvStream } from '../../platform/http/csv.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { saveContactFromSource } from '../accounts/contacts.service.js'
import {
  findFunnelForSubmission,
  insertSubmission,
  type ListedSubmission,
  listSubmissions,
  nextSubmissions,
  type SubmissionFilter,
  submissionsList,
} from './forms.repository.js'
import {
  type DateRangeQuery,
  type FormSubmission,
  type FormsQuery,
  HONEYPOT_FIELD,
  MAX_VALUE_BYTES,
  type SubmitBody,
  type Submitted,
} from './forms.schemas.js'
import {
  FUNNEL_NOT_FOUND,
  INVALID_FUNNEL_ID,
  requireFunnel,
  STEP_NOT_FOUND,
} from './funnel-access.service.js'
import type { StepCache } from './step-cache.js'

/** What the route adds to the body: where the post came from. */
export interface SubmissionOrigin {
  ipAddress: string
  userAgent: string | undefined
}

/** The usual names of a form's fields for a person, compared in lower snake case ("First Name" = first_name). */
const PERSON_FIELDS = {
  name: ['name', 'full_name', 'fullname', 'your_name'],
  firstName: ['first_name', 'firstname'],
  lastName: ['last_name', 'lastname', 'surname'],
  email: ['email', 'email_address', 'e_mail'],
  phone: ['phone', 'phone_number', 'mobile', 'mobile_phone', 'telephone'],
  message: ['message', 'comments', 'comment'],
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * Who filled the form, from its usual field names (the first non-blank one, as given): `name` or else
 * first and last name joined.
 */
export function personDetails(fields: Record<string, string>) {
  const byKey = new Map<string, string>()
  for (const [name, value] of Object.entries(fields)) {
    const key = name
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
    if (value.trim() && !byKey.has(key)) byKey.set(key, value)
  }
  const first = (names: string[]) => names.map((name) => byKey.get(name)).find(Boolean)
  const fullName = [first(PERSON_FIELDS.firstName), first(PERSON_FIELDS.lastName)]
    .flatMap((part) => part?.trim() ?? [])
    .join(' ')
  return {
    name: first(PERSON_FIELDS.name) ?? (fullName || undefined),
    email: first(PERSON_FIELDS.email),
    phone: first(PERSON_FIELDS.phone),
    message: first(PERSON_FIELDS.message),
  }
}

/** Every value a string of at most MAX_VALUE_BYTES; a 400 names the first field that is not. */
function formFields(fields: Record<string, unknown>): Record<string, string> {
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string') throw new Invalid(`fields.${name} must be a string`)
    if (Buffer.byteLength(value) > MAX_VALUE_BYTES)
      throw new Invalid(`fields.${name} must be at most ${MAX_VALUE_BYTES} bytes`)
  }
  return fields as Record<string, string>
}

/**
 * The account of the live funnel the step belongs to (404 otherwise). Pages post to steps that exist, so
 * found ones are kept in the step cache, which every write to the funnel or its steps clears.
 */
async function accountOfStep(db: Database, stepCache: StepCache<string>, funnelId: string, stepId: string) {
  const key = `form-step:${funnelId}:${stepId}`
  const cached = stepCache.get(key)
  if (cached) return cached
  const generation = stepCache.generation()
  const funnel = await findFunnelForSubmission(db, funnelId, stepId)
  if (!funnel) throw new NotFound(FUNNEL_NOT_FOUND)
  if (!funnel.hasStep) throw new NotFound(STEP_NOT_FOUND)
  stepCache.set(key, funnelId, funnel.accountId, generation)
  return funnel.accountId
}

/**
 * The account a form post is for, if it still takes posts. A post hands the visitor's details to the
 * account's apps (`contact.created`), so a removed or suspended account's funnel is answered as an unknown
 * one: checked past the step cache, which may keep the step for minutes after the funnel's rows are gone.
 */
async function funnelOfStep(db: Database, stepCache: StepCache<string>, funnelId: string, stepId: string) {
  const accountId = await accountOfStep(db, stepCache, funnelId, stepId)
  if (!(await isAccountServing(db, accountId, 'share'))) throw new NotFound(FUNNEL_NOT_FOUND)
  return { accountId }
}

/**
 * A published page's form post: kept with where it came from, and, when it carries an email or a phone,
 * the account's contact created or updated from it in the same transaction (announced like any other
 * contact change), its id kept on the submission. A filled honeypot is answered alike and stored nowhere.
 */
export async function submitForm(
  db: Database,
  changes: Changes,
  stepCache: StepCache<string>,
  body: SubmitBody,
  origin: SubmissionOrigin,
): Promise<Submitted> {
  if (!isId(body.funnel_id)) throw new Invalid(INVALID_FUNNEL_ID)
  const { [HONEYPOT_FIELD]: honeypot, ...fields } = formFields(body.fields)
  const funnel = await funnelOfStep(db, stepCache, body.funnel_id, body.step_id)
  if (honeypot) return { _id: newId(), submitted_at: new Date().toISOString() }

  const record = (tx: Database, contactId: string | null) =>
    insertSubmission(tx, funnel.accountId, {
      funnelId: body.funnel_id,
      stepId: body.step_id,
      formId: body.form_id,
      fields,
      visitorId: body.visitor_id,
      ipAddress: origin.ipAddress,
      userAgent: origin.userAgent,
      contactId,
    })
  // An email that is not one (a typo, a bot, longer than SMTP carries) identifies nobody; the submission
  // keeps it all the same.
  const { name, email, phone } = personDetails(fields)
  const validEmail =
    email && email.trim().length <= EMAIL_MAX_LENGTH && EMAIL.test(email.trim()) ? email : undefined
  const person = validEmail ? { email: validEmail, name, phone } : phone ? { phone, name } : undefined
  const saved = person
    ? await inTransaction(db, async (tx) => {
        const contact = await saveContactFromSource(tx, changes, funnel.accountId, person)
        return record(tx, contact._id)
      })
    : await record(db, null)
  return { _id: saved.id, submitted_at: saved.submittedAt.toISOString() }
}

const ISO_8601 = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/i
const DAY_MS = 86_400_000

/**
 * A bound of `start_date` / `end_date`: a date is its whole day (UTC), a date-time without offset is UTC.
 * `end` gives the first instant after the bound, so that the end date's last moment is included.
 */
function dateBound(value: string, field: string, end: boolean): Date {
  const [, day, time, offset] = ISO_8601.exec(value) ?? []
  const dayStart = day ? Date.parse(day) : Number.NaN
  const at = time ? Date.parse(offset ? value : `${value}Z`) : dayStart
  // Date.parse rolls 30 February over into March: the day must read back as it was given.
  if (Number.isNaN(dayStart) || Number.isNaN(at) || new Date(dayStart).toISOString().slice(0, 10) !== day)
    throw new Invalid(`${field} must be an ISO 8601 date or date-time`)
  return new Date(end ? at + (time ? 1 : DAY_MS) : at)
}

function dateRange(query: DateRangeQuery): SubmissionFilter {
  const from = query.start_date === undefined ? undefined : dateBound(query.start_date, 'start_date', false)
  const before = query.end_date === undefined ? undefined : dateBound(query.end_date, 'end_date', true)
  if (from && before && from >= before) throw new Invalid('start_date must not be after end_date')
  return { from, before }
}

const submissionView = (row: ListedSubmission): FormSubmission => ({
  _id: row.id,
  funnel_id: row.funnelId,
  step_id: row.stepId,
  step_name: row.stepName,
  form_id: row.formId,
  fields: row.fields,
  ...(row.visitorId !== null && { visitor_id: row.visitorId }),
  ...(row.ipAddress !== null && { ip_address: row.ipAddress }),
  ...(row.userAgent !== null && { user_agent: row.userAgent }),
  contact_id: row.contactId,
  submitted_at: row.submittedAt.toISOString(),
})

/** A page of the caller's funnel's submissions, newest first, filtered by text in a value and by date. */
export async function listForms(
  db: Database,
  accountId: string,
  funnelId: string,
  query: FormsQuery,
): Promise<{ data: FormSubmission[]; pagination: Pagination | CursorPagination }> {
  const filter = { ...dateRange(query), search: query.search || undefined }
  await requireFunnel(db, accountId, funnelId)
  return paginateList(
    submissionsList,
    query,
    (window) => listSubmissions(db, accountId, funnelId, { ...filter, ...window }),
    submissionView,
  )
}

/** Submissions read per query: what an export holds in memory at once. */
export const EXPORT_BATCH = 1_000

/** The spec's header row, in order, over the keys of each exported record. */
const EXPORT_COLUMNS = [
  { key: 'submitted_at', header: 'Submission Date' },
  { key: 'name', header: 'Name' },
  { key: 'email', header: 'Email' },
  { key: 'phone', header: 'Phone' },
  { key: 'message', header: 'Message' },
  { key: 'ip_address', header: 'IP Address' },
] as const
type ExportedSubmission = Record<(typeof EXPORT_COLUMNS)[number]['key'], string>

async function* exportedBatches(
  db: Database,
  accountId: string,
  funnelId: string,
  filter: SubmissionFilter,
): AsyncGenerator<ExportedSubmission[]> {
  let afterId: string | undefined
  for (;;) {
    const rows = await nextSubmissions(db, accountId, funnelId, { ...filter, afterId, limit: EXPORT_BATCH })
    if (rows.length > 0)
      yield rows.map((row) => {
        const person = personDetails(row.fields)
        return {
          submitted_at: row.submittedAt.toISOString(),
          name: person.name ?? '',
          email: person.email ?? '',
          phone: person.phone ?? '',
          message: person.message ?? '',
          ip_address: row.ipAddress ?? '',
        }
      })
    afterId = rows.at(-1)?.id
    if (!afterId || rows.length < EXPORT_BATCH) return
  }
}

/** `Forms-<date>-<time>.csv` in UTC, e.g. `Forms-2025-03-14-09-26-53.csv` (no colons: not in file names). */
export function exportFileName(now: Date): string {
  const iso = now.toISOString()
  return `Forms-${iso.slice(0, 10)}-${iso.slice(11, 19).replaceAll(':', '-')}.csv`
}

/**
 * The caller's funnel's submissions as CSV, newest first, streamed in keyset batches: the spec's header
 * row and file name, every cell that could run as a formula in a spreadsheet neutralised.
 */
export async function exportForms(
  db: Database,
  accountId: string,
  funnelId: string,
  query: DateRangeQuery,
): Promise<{ fileName: string; body: Readable }> {
  const filter = dateRange(query)
  await requireFunnel(db, accountId, funnelId)
  return {
    fileName: exportFileName(new Date()),
    body: csvStream(exportedBatches(db, accountId, funnelId, filter), { columns: EXPORT_COLUMNS }),
  }
}
