import type { Database } from '../../platform/db/connection.js'
import { oauthCodes } from './tables.js'

export async function insertCode(db: Database, values: typeof oauthCodes.$inferInsert): Promise<void> {
  await db.insert(oauthCodes).values(values)
}
