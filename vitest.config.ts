import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Fixtures are run by the tests that need them (test/fixtures/dependency-rules holds code named *.test.ts).
    exclude: [...configDefaults.exclude, 'test/fixtures/**'],
    // Each file opens its own database (an in-memory PGlite, or its own PostgreSQL database).
    pool: 'forks',
    // Two files at once even on two cores (vitest's default is cores - 1, one here): most of a file's time
    // is spent waiting on its database and job queue (docs/decisions.md, the test suite's time).
    maxWorkers: 2,
    // Compiles dist/ once for the tests that start the server, worker and CLI as users do; drops, at the end
    // of the run, the PostgreSQL databases of files that failed before dropping their own.
    globalSetup: ['test/helpers/build-run.ts', 'test/helpers/database-run.ts'],
    // A file's first test also pays for its fixtures (an embedded database opened and migrated), which on a
    // two-core machine running two files at once took up to 30 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
