import type { S3Client } from '@aws-sdk/client-s3'
import type { Config } from '../../config.js'
import type { ObjectStorage } from './object-storage.js'

export type S3Settings = NonNullable<Config['storage']['s3']>

type S3Sdk = typeof import('@aws-sdk/client-s3')

/** The SDK is loaded when S3 is configured, never otherwise: it is large and most servers use files. */
async function createClient(settings: S3Settings): Promise<{ client: S3Client; sdk: S3Sdk }> {
  const sdk = await import('@aws-sdk/client-s3')
  const { accessKeyId, secretAccessKey } = settings
  const client = new sdk.S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    // S3-compatible servers (MinIO, local fakes) are addressed by path, not by bucket subdomain.
    forcePathStyle: Boolean(settings.endpoint),
    // Without explicit keys the SDK's default chain applies (environment, profile, instance role).
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  })
  return { client, sdk }
}

function isNoSuchKey(error: unknown): boolean {
  return (error as { name?: string }).name === 'NoSuchKey'
}

/** Objects in one S3 bucket (or an S3-compatible server at `endpoint`). */
export function createS3Storage(settings: S3Settings): ObjectStorage {
  const loaded = createClient(settings)
  // A failed load surfaces at the first put, get or delete, not as an unhandled rejection at start.
  loaded.catch(() => undefined)
  const bucket = settings.bucket

  return {
    async put(key, body, contentType) {
      const { client, sdk } = await loaded
      await client.send(
        new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
      )
      return { bucket, key, size: body.length }
    },

    async get(key) {
      const { client, sdk } = await loaded
      try {
        const object = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }))
        if (!object.Body) return Buffer.alloc(0)
        return Buffer.from(await object.Body.transformToByteArray())
      } catch (error) {
        if (isNoSuchKey(error)) return null
        throw error
      }
    },

    async delete(key) {
      // S3 answers 204 for a key that does not exist, so a missing object needs no special case.
      const { client, sdk } = await loaded
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }))
    },
  }
}
