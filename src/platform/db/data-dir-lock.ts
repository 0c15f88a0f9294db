import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { StartError } from '../start-error.js'

export class DataDirInUse extends StartError {}

/** Lock files this process holds: a lock with our own pid is stale unless it is one of these. */
const heldHere = new Set<string>()

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function tryCreate(file: string): boolean {
  try {
    const fd = openSync(file, 'wx')
    writeSync(fd, String(process.pid))
    closeSync(fd)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

/**
 * The embedded database allows one process at a time: a second `npm start` (or `db:migrate`) on the
 * same DATA_DIR would corrupt it. The first process holds `pglite.lock` with its pid; a lock whose
 * process is gone is taken over. Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'pglite.lock')
  if (!tryCreate(file)) {
    const holder = Number(readFileSync(file, 'utf8'))
    const ours = holder === process.pid
    if (heldHere.has(file) || (Number.isInteger(holder) && !ours && isRunning(holder))) {
      throw new DataDirInUse(
        `the embedded database in ${dataDir} is in use by process ${holder} ` +
          `(if that process is not this service, remove ${file})`,
      )
    }
    rmSync(file, { force: true })
    if (!tryCreate(file))
      throw new DataDirInUse(`the embedded database in ${dataDir} was just taken by another process`)
  }
  heldHere.add(file)
  return () => {
    heldHere.delete(file)
    rmSync(file, { force: true })
  }
}
