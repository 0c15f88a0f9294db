import type { Database } from '../../platform/db/connection.js'
import { isForeignKeyViolation } from '../../platform/db/errors.js'
import { isId } from '../../platform/db/ids.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, Invalid, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import type { TemplateChannel } from './documents.schemas.js'
import {
  deleteTemplate,
  findTemplate,
  insertTemplate,
  listTemplates,
  type TemplateRow,
  updateTemplate,
} from './templates.repository.js'
import { type CreateBody, MAX_SMS_BODY, type Template, type UpdateBody } from './templates.schemas.js'

/** The spec's refusal of a `template_id` that names no template of the account. */
export const TEMPLATE_NOT_FOUND = 'Template not found'
export const TEMPLATE_IN_USE = 'Template is in use by the auto review request configuration'

export const templateView = (row: TemplateRow): Template => ({
  _id: row.id,
  account_id: row.accountId,
  name: row.name,
  channel: row.channel,
  subject: row.subject,
  body: row.body,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** The message a configuration naming no template sends, per channel. */
export const DEFAULT_TEMPLATES: Record<TemplateChannel, Pick<Template, 'subject' | 'body'>> = {
  email: {
    subject: 'How did we do, {{customer.name}}?',
    body:
      '<p>Hi {{customer.name}},</p><p>Thank you for choosing {{business.name}}. Would you take a minute to ' +
      'tell others about your experience?</p><p><a href="{{review.link}}">Leave a review</a></p>',
  },
  sms: {
    subject: '',
    body: 'Hi {{customer.name}}, thanks for choosing {{business.name}}! Would you leave us a review? {{review.link}}',
  },
}

/** What the schema cannot say: an email needs a subject, an SMS fits Twilio's limit. */
function assertFitsChannel(channel: TemplateChannel, template: { subject: string; body: string }): void {
  if (channel === 'email' && template.subject.trim() === '')
    throw new Invalid('subject is required for an email template')
  if (channel === 'sms' && template.body.length > MAX_SMS_BODY)
    throw new Invalid(`body must be at most ${MAX_SMS_BODY} characters long for an SMS template`)
}

export async function createTemplate(db: Database, accountId: string, input: CreateBody): Promise<Template> {
  assertFitsChannel(input.channel, { subject: input.subject ?? '', body: input.body })
  const row = await insertTemplate(db, accountId, {
    name: input.name,
    channel: input.channel,
    subject: input.channel === 'sms' ? '' : (input.subject ?? ''),
    body: input.body,
  })
  return templateView(row)
}

/** The account's template: 404 `Template not found` for a malformed, unknown or another account's id. */
export async function requireTemplate(
  db: Database,
  accountId: string,
  templateId: string,
): Promise<TemplateRow> {
  const row = isId(templateId) ? await findTemplate(db, accountId, templateId) : undefined
  if (!row) throw new NotFound(TEMPLATE_NOT_FOUND)
  return row
}

export async function getTemplate(db: Database, accountId: string, templateId: string): Promise<Template> {
  return templateView(await requireTemplate(db, accountId, templateId))
}

export async function changeTemplate(
  db: Database,
  accountId: string,
  templateId: string,
  changes: UpdateBody,
): Promise<Template> {
  const current = await requireTemplate(db, accountId, templateId)
  assertFitsChannel(current.channel, {
    subject: changes.subject ?? current.subject,
    body: changes.body ?? current.body,
  })
  const row = await updateTemplate(db, accountId, templateId, {
    ...changes,
    ...(current.channel === 'sms' && { subject: '' }),
  })
  if (!row) throw new NotFound(TEMPLATE_NOT_FOUND)
  return templateView(row)
}

/** Deletes the template unless a configuration uses it (409; the foreign key decides, races included). */
export async function removeTemplate(db: Database, accountId: string, templateId: string): Promise<void> {
  await requireTemplate(db, accountId, templateId)
  try {
    if (!(await deleteTemplate(db, accountId, templateId))) throw new NotFound(TEMPLATE_NOT_FOUND)
  } catch (error) {
    if (isForeignKeyViolation(error)) throw new Conflict(TEMPLATE_IN_USE)
    throw error
  }
}

export function listAccountTemplates(
  db: Database,
  accountId: string,
  query: { page: number; limit: number },
): Promise<{ data: Template[]; pagination: Pagination }> {
  return paginate(query, (window) => listTemplates(db, accountId, window), templateView)
}
