import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname, resolve, sep } from 'node:path'
import type { ObjectStorage } from './object-storage.js'

/** Errors that mean "no object under this key" rather than a broken disk. */
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR'])

function isMissing(error: unknown): boolean {
  return MISSING.has((error as NodeJS.ErrnoException).code ?? '')
}

/** Objects as files under `root`, for a single machine or development (bucket `local`). */
export function createFileStorage(root: string): ObjectStorage {
  const base = resolve(root)

  // Keys are validated before they reach a backend; this keeps the folder safe even if one is not.
  function pathOf(key: string): string {
    const path = resolve(base, key)
    if (!path.startsWith(base + sep)) throw new Error(`Object key ${JSON.stringify(key)} leaves the storage`)
    return path
  }

  return {
    async put(key, body) {
      const path = pathOf(key)
      await mkdir(dirname(path), { recursive: true })
      // Written beside the target, then renamed: readers see the old object or the new one, never half.
      const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`
      try {
        await writeFile(temporary, body)
        await rename(temporary, path)
      } catch (error) {
        await unlink(temporary).catch(() => undefined)
        throw error
      }
      return { bucket: 'local', key, size: body.length }
    },

    async get(key) {
      try {
        return await readFile(pathOf(key))
      } catch (error) {
        if (isMissing(error)) return null
        throw error
      }
    },

    async delete(key) {
      try {
        await unlink(pathOf(key))
      } catch (error) {
        if (!isMissing(error)) throw error
      }
    },
  }
}
