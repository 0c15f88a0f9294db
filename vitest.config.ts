import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Each file opens its own database (an in-memory PGlite, or its own PostgreSQL database).
    pool: 'forks',
    // Drops, at the end of the run, the PostgreSQL databases of files that failed before dropping their own.
    globalSetup: ['test/helpers/database-run.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
