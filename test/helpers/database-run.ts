import { randomBytes } from 'node:crypto'
import type { TestProject } from 'vitest/node'
import { dropDatabasesStartingWith } from './database.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The start of the name of every PostgreSQL database this run creates (test/helpers/database.ts). */
    testDatabasePrefix: string
  }
}

/**
 * vitest globalSetup: names this run's test databases, and when the run ends drops any that a failing
 * test file (a beforeAll that threw, a close that failed) left behind. Other runs on the same server
 * have other prefixes and keep theirs.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const prefix = `test_${randomBytes(4).toString('hex')}_`
  project.provide('testDatabasePrefix', prefix)
  return async () => {
    const serverUrl = process.env.DATABASE_URL
    if (!serverUrl) return
    const left = await dropDatabasesStartingWith(serverUrl, prefix)
    if (left.length > 0)
      console.warn(`dropped ${left.length} test database(s) failing files left: ${left.join(', ')}`)
  }
}
