import { and, desc, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { reviewTemplates } from './tables.js'

export type TemplateRow = typeof reviewTemplates.$inferSelect
type TemplateValues = Pick<TemplateRow, 'name' | 'channel' | 'subject' | 'body'>

const ofAccount = (accountId: string, templateId: string) =>
  and(eq(reviewTemplates.accountId, accountId), eq(reviewTemplates.id, templateId))

export async function insertTemplate(db: Database, accountId: string, values: TemplateValues) {
  const [row] = await db
    .insert(reviewTemplates)
    .values({ ...values, accountId })
    .returning()
  return row as TemplateRow
}

export async function findTemplate(db: Database, accountId: string, templateId: string) {
  const [row] = await db.select().from(reviewTemplates).where(ofAccount(accountId, templateId))
  return row
}

export async function updateTemplate(
  db: Database,
  accountId: string,
  templateId: string,
  changes: Partial<TemplateValues>,
) {
  const [row] = await db
    .update(reviewTemplates)
    .set(changes)
    .where(ofAccount(accountId, templateId))
    .returning()
  return row
}

export async function deleteTemplate(db: Database, accountId: string, templateId: string): Promise<boolean> {
  const rows = await db
    .delete(reviewTemplates)
    .where(ofAccount(accountId, templateId))
    .returning({ id: reviewTemplates.id })
  return rows.length === 1
}

export function listTemplates(db: Database, accountId: string, page: { offset: number; limit: number }) {
  const where = eq(reviewTemplates.accountId, accountId)
  return selectPage(
    db,
    db
      .select()
      .from(reviewTemplates)
      .where(where)
      .orderBy(desc(reviewTemplates.createdAt), desc(reviewTemplates.id))
      .$dynamic(),
    { from: reviewTemplates, where },
    page,
  )
}
