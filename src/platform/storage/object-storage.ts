/**
 * What object storage is, apart from where the bytes live: the backends (files.ts, s3.ts) implement it,
 * storage.ts picks one, and the services that keep attachments take it as a dependency.
 */

export interface StoredObject {
  bucket: string
  key: string
  size: number
}

/** Where attachments' bytes live; the database keeps only their metadata. */
export interface ObjectStorage {
  put(key: string, body: Buffer, contentType?: string): Promise<StoredObject>
  /** The object's bytes, or null when there is no object under the key. */
  get(key: string): Promise<Buffer | null>
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>
}
