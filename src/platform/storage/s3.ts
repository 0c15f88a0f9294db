import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import type { Config } from '../../config.js'
import type { ObjectStorage } from './storage.js'

export type S3Settings = NonNullable<Config['storage']['s3']>

function createClient(settings: S3Settings): S3Client {
  const { accessKeyId, secretAccessKey } = settings
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    // S3-compatible servers (MinIO, local fakes) are addressed by path, not by bucket subdomain.
    forcePathStyle: Boolean(settings.endpoint),
    // Without explicit keys the SDK's default chain applies (environment, profile, instance role).
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  })
}

function isNoSuchKey(error: unknown): boolean {
  return (error as { name?: string }).name === 'NoSuchKey'
}

/** Objects in one S3 bucket (or an S3-compatible server at `endpoint`). */
export function createS3Storage(settings: S3Settings): ObjectStorage {
  const client = createClient(settings)
  const bucket = settings.bucket

  return {
    async put(key, body, contentType) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
      )
      return { bucket, key, size: body.length }
    },

    async get(key) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
        if (!object.Body) return Buffer.alloc(0)
        return Buffer.from(await object.Body.transformToByteArray())
      } catch (error) {
        if (isNoSuchKey(error)) return null
        throw error
      }
    },

    async delete(key) {
      // S3 answers 204 for a key that does not exist, so a missing object needs no special case.
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
    },
  }
}
