import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openDatabase } from './connection.js'
import { DataDirInUse, lockDataDir } from './data-dir-lock.js'

const tempDir = () => mkdtempSync(join(tmpdir(), 'pglite-lock-'))

describe('one process per embedded database', () => {
  it('refuses a second opening of the same DATA_DIR until the first closes', async () => {
    const dataDir = tempDir()
    const first = await openDatabase({ dataDir })
    await expect(openDatabase({ dataDir })).rejects.toThrow(DataDirInUse)
    await first.close()
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false)
    const again = await openDatabase({ dataDir })
    await again.close()
  })

  it('takes over the lock of a process that is gone', () => {
    const dataDir = tempDir()
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number
    writeFileSync(join(dataDir, 'pglite.lock'), String(gone))
    const release = lockDataDir(dataDir)
    expect(readFileSync(join(dataDir, 'pglite.lock'), 'utf8')).toBe(String(process.pid))
    release()
  })

  it('takes over a lock left with its own pid by an earlier run (a container restarted as pid 1)', () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, 'pglite.lock'), String(process.pid))
    const release = lockDataDir(dataDir)
    expect(() => lockDataDir(dataDir)).toThrow(DataDirInUse)
    release()
  })

  it('names the holder in the refusal', () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, 'pglite.lock'), String(process.ppid))
    expect(() => lockDataDir(dataDir)).toThrow(`in use by process ${process.ppid}`)
  })
})
