import { join } from 'node:path'
import type { Config } from '../../config.js'
import { createFileStorage } from './files.js'
import type { ObjectStorage } from './object-storage.js'
import { createS3Storage } from './s3.js'

/** S3 when S3_BUCKET is set, otherwise files under DATA_DIR/objects. */
export function createObjectStorage(config: Config): ObjectStorage {
  const backend = config.storage.s3
    ? createS3Storage(config.storage.s3)
    : createFileStorage(join(config.dataDir, 'objects'))
  return withValidKeys(backend)
}

const MAX_KEY_LENGTH = 1024

/**
 * Throws unless the key is a relative path of plain segments: keys become file paths in the file
 * backend, so `..`, absolute paths and backslashes (a separator on Windows) could leave its folder.
 */
export function assertValidKey(key: string): void {
  const problem = keyProblem(key)
  if (problem) throw new Error(`Invalid object key ${JSON.stringify(key)}: ${problem}`)
}

function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'it is empty'
  if (key.length > MAX_KEY_LENGTH) return `it is longer than ${MAX_KEY_LENGTH} characters`
  if (key.includes('\0')) return 'it contains a NUL character'
  if (key.includes('\\')) return 'it contains a backslash'
  if (key.startsWith('/') || /^[a-z]:/i.test(key)) return 'it must be relative, not absolute'
  const segments = key.split('/')
  if (segments.some((segment) => segment === '..' || segment === '.')) return 'it contains "." or ".."'
  if (segments.some((segment) => segment === '')) return 'it contains an empty segment'
  return undefined
}

function withValidKeys(storage: ObjectStorage): ObjectStorage {
  return {
    put: async (key, body, contentType) => {
      assertValidKey(key)
      return storage.put(key, body, contentType)
    },
    get: async (key) => {
      assertValidKey(key)
      return storage.get(key)
    },
    delete: async (key) => {
      assertValidKey(key)
      return storage.delete(key)
    },
  }
}
