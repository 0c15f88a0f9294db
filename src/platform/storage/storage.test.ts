import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../config.js'
import type { ObjectStorage } from './object-storage.js'
import { createObjectStorage } from './storage.js'

// s3rver ships no type declarations; the little of it the test uses is typed here.
interface S3rverServer {
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
type S3rverConstructor = new (options: {
  address: string
  port: number
  directory: string
  silent: boolean
  configureBuckets: { name: string }[]
}) => S3rverServer
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

const BUCKET = 'platform-test'

interface Backend {
  storage: ObjectStorage
  bucket: string
  dataDir: string
  stop(): Promise<void>
}

function temporaryDir(): string {
  return mkdtempSync(join(tmpdir(), 'storage-test-'))
}

async function startFileBackend(): Promise<Backend> {
  const dataDir = temporaryDir()
  const storage = createObjectStorage(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir }))
  return { storage, bucket: 'local', dataDir, stop: async () => rmSync(dataDir, { recursive: true }) }
}

async function startS3Backend(): Promise<Backend> {
  const dataDir = temporaryDir()
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: join(dataDir, 's3rver'),
    silent: true,
    configureBuckets: [{ name: BUCKET }],
  })
  const { port } = await server.run()
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    S3_BUCKET: BUCKET,
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    // s3rver's built-in account; explicit keys also keep the SDK off any other credential source.
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
  })
  return {
    storage: createObjectStorage(config),
    bucket: BUCKET,
    dataDir,
    stop: async () => {
      await server.close()
      rmSync(dataDir, { recursive: true })
    },
  }
}

describe.each([
  { name: 'files', start: startFileBackend },
  { name: 's3', start: startS3Backend },
])('object storage on $name', ({ start }) => {
  let backend: Backend
  beforeAll(async () => {
    backend = await start()
  })
  afterAll(() => backend.stop())

  it('gives back the exact bytes it stored and reports bucket, key and size', async () => {
    const body = Buffer.concat([Buffer.from([0, 255, 10, 13]), randomBytes(64 * 1024)])
    const key = 'accounts/650000000000000000000001/attachments/photo.bin'
    const stored = await backend.storage.put(key, body, 'application/octet-stream')
    expect(stored).toEqual({ bucket: backend.bucket, key, size: body.length })
    const read = await backend.storage.get(key)
    expect(read?.equals(body)).toBe(true)
  })

  it('replaces an object put again under the same key', async () => {
    await backend.storage.put('replaced.txt', Buffer.from('first'))
    await backend.storage.put('replaced.txt', Buffer.from('second'), 'text/plain')
    expect((await backend.storage.get('replaced.txt'))?.toString()).toBe('second')
  })

  it('answers null for a key that was never stored', async () => {
    expect(await backend.storage.get('missing/nothing-here.bin')).toBeNull()
  })

  it('forgets a deleted object', async () => {
    await backend.storage.put('deleted.txt', Buffer.from('bye'))
    await backend.storage.delete('deleted.txt')
    expect(await backend.storage.get('deleted.txt')).toBeNull()
  })

  it('deletes a missing key without error', async () => {
    await expect(backend.storage.delete('never/stored.txt')).resolves.toBeUndefined()
  })

  it.each(['../outside.txt', 'accounts/../../outside.txt', '/etc/passwd', '..'])(
    'refuses the key %j',
    async (key) => {
      await expect(backend.storage.put(key, Buffer.from('x'))).rejects.toThrow(/Invalid object key/)
      await expect(backend.storage.get(key)).rejects.toThrow(/Invalid object key/)
      await expect(backend.storage.delete(key)).rejects.toThrow(/Invalid object key/)
      expect(existsSync(join(backend.dataDir, 'outside.txt'))).toBe(false)
    },
  )
})

describe('object storage without S3_BUCKET', () => {
  let backend: Backend
  beforeAll(async () => {
    backend = await startFileBackend()
  })
  afterAll(() => backend.stop())

  it('keeps files under DATA_DIR/objects, creating folders as needed', async () => {
    await backend.storage.put('nested/folder/file.txt', Buffer.from('here'))
    expect(existsSync(join(backend.dataDir, 'objects', 'nested', 'folder', 'file.txt'))).toBe(true)
  })
})
