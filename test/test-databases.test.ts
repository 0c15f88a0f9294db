import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'

const VITEST = join('node_modules', 'vitest', 'vitest.mjs')

describe.skipIf(!process.env.DATABASE_URL)('test databases on PostgreSQL', () => {
  it('are dropped when the run ends, even the one of a file whose beforeAll failed', async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'left-database-')), 'url')
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')))
    const run = spawnSync(
      process.execPath,
      [VITEST, 'run', '--config', 'test/fixtures/failing-file/vitest.config.ts'],
      { env: { ...env, LEFT_DATABASE_REPORT: report }, encoding: 'utf8', timeout: 120_000 },
    )
    expect(run.status, run.stdout + run.stderr).toBe(1)
    expect(run.stdout + run.stderr).toContain('a beforeAll that fails')
    const name = new URL(readFileSync(report, 'utf8')).pathname.slice(1)
    expect(name).toMatch(/^test_[0-9a-f]{8}_[0-9a-f]{12}$/)

    const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await client.connect()
    try {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name])
      expect(rowCount).toBe(0)
    } finally {
      await client.end()
    }
  }, 150_000)
})
