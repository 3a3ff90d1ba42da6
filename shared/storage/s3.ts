// Objects in Amazon S3 or an S3-compatible server (the local stack's), through the AWS SDK v3.
//
// Locations use Iceberg's form, `s3://<bucket>/<key>` (`s3a://` is read too): Iceberg's Java
// S3FileIO and pyiceberg's S3 FileIO both open it; the endpoint and path-style addressing come
// from configuration, which is how the same location works on a local server.
//
// Credentials: the ones configured (from the FLOE_STORAGE__S3__* environment, never the YAML),
// else the SDK's standard chain (AWS_* variables, the shared files, web identity, the instance's
// role). The SDK retries throttling and 5xx itself with backoff (maxAttempts); what it gives up
// on is STORAGE_UNAVAILABLE, which the uploader retries without a limit.
import { createReadStream } from 'node:fs'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { FloeError } from '../errors.ts'
import type { ObjectStorage, StorageCallOptions, StoredObject } from './object-storage.ts'
import { s3Failure } from './s3-failure.ts'

export interface S3Config {
  /** The bucket Floe writes to: a location in another bucket is refused. */
  bucket: string
  /** Key prefix inside the bucket that every location must lie under ('' for the whole bucket). */
  prefix?: string
  region?: string
  /** An S3-compatible server's URL (http://127.0.0.1:9000); unset for AWS's own endpoints. */
  endpoint?: string
  /** Bucket in the path (http://host/bucket/key) instead of the host name: most local servers need it. */
  forcePathStyle?: boolean
  /** Static credentials; without them the SDK's standard chain is used. */
  accessKeyId?: string
  secretAccessKey?: string
  sessionToken?: string
  /** Tries per request, the first included, with the SDK's backoff between them. */
  maxAttempts?: number
  /** Per-request limit on a silent server: a frozen endpoint fails the try instead of hanging it. */
  requestTimeoutMs?: number
}

export interface S3Location {
  scheme: string
  bucket: string
  key: string
}

const s3LocationPattern = /^(s3a?):\/\/([^/]+)(?:\/(.*))?$/i

export function parseS3Location(location: string): S3Location {
  const match = s3LocationPattern.exec(location)
  if (!match) throw new FloeError('CONFIG_INVALID', `not an S3 location: ${location}`, { details: { location } })
  return { scheme: match[1]!.toLowerCase(), bucket: match[2]!, key: match[3] ?? '' }
}

/**
 * Parts of 8 MiB, 4 in flight: lib-storage holds partSize x queueSize in memory per upload, so a
 * segment of any size streams through 32 MiB. An object below one part goes as one PutObject.
 */
export const multipartPartSize = 8 * 1024 * 1024
const queueSize = 4

export class S3Storage implements ObjectStorage {
  readonly #client: S3Client
  readonly #bucket: string
  readonly #prefix: string

  constructor(config: S3Config) {
    if (!config.bucket) throw new FloeError('CONFIG_INVALID', 'S3 storage needs a bucket')
    this.#bucket = config.bucket
    this.#prefix = (config.prefix ?? '').replace(/^\/+/, '')
    const clientConfig: S3ClientConfig = {
      region: config.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      forcePathStyle: config.forcePathStyle ?? false,
      maxAttempts: config.maxAttempts ?? 4,
      requestHandler: { requestTimeout: config.requestTimeoutMs ?? 60_000, connectionTimeout: 10_000 },
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    }
    if (config.accessKeyId !== undefined || config.secretAccessKey !== undefined) {
      if (!config.accessKeyId || !config.secretAccessKey) {
        throw new FloeError('CONFIG_INVALID', 'S3 credentials need both an access key id and a secret access key')
      }
      clientConfig.credentials = {
        accessKeyId: config.accessKeyId,
        secretAccessKey: config.secretAccessKey,
        ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
      }
    }
    this.#client = new S3Client(clientConfig)
  }

  get bucket(): string {
    return this.#bucket
  }

  #object(location: string, needsKey = true): S3Location {
    const parsed = parseS3Location(location)
    if (parsed.bucket !== this.#bucket) {
      throw new FloeError(
        'CONFIG_INVALID',
        `location ${location} is in bucket ${parsed.bucket}, storage is configured for ${this.#bucket}`,
        { details: { location } },
      )
    }
    if (!parsed.key.startsWith(this.#prefix)) {
      throw new FloeError('CONFIG_INVALID', `location ${location} is outside the configured prefix ${this.#prefix}`, {
        details: { location },
      })
    }
    if (needsKey && parsed.key === '') {
      throw new FloeError('CONFIG_INVALID', `no object key in ${location}`, { details: { location } })
    }
    return parsed
  }

  async #upload(location: string, body: Uint8Array | NodeJS.ReadableStream, signal?: AbortSignal): Promise<void> {
    const { key } = this.#object(location)
    signal?.throwIfAborted()
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: key, Body: body as Uint8Array },
      partSize: multipartPartSize,
      queueSize,
      // A failed multipart upload is aborted, so its parts are not left billed and invisible.
      leavePartsOnError: false,
    })
    const abort = () => void upload.abort().catch(() => {})
    signal?.addEventListener('abort', abort, { once: true })
    try {
      await upload.done()
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      throw error
    } finally {
      signal?.removeEventListener('abort', abort)
    }
  }

  async put(location: string, bytes: Uint8Array, options: StorageCallOptions = {}): Promise<void> {
    try {
      await this.#upload(location, bytes, options.signal)
    } catch (error) {
      throw this.#failure(error, 'put', location)
    }
  }

  async putFile(location: string, localPath: string, options: StorageCallOptions = {}): Promise<void> {
    const stream = createReadStream(localPath)
    // A missing file fails the read stream, which lib-storage would otherwise wait on forever.
    const opened = new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve())
      stream.once('error', reject)
    })
    try {
      await opened
      await this.#upload(location, stream, options.signal)
    } catch (error) {
      throw this.#failure(error, 'put', location)
    } finally {
      stream.destroy()
    }
  }

  async get(location: string, options: StorageCallOptions = {}): Promise<Uint8Array> {
    try {
      const { key } = this.#object(location)
      const answer = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: key }),
        options.signal ? { abortSignal: options.signal } : {},
      )
      if (answer.Body === undefined) return new Uint8Array()
      return await answer.Body.transformToByteArray()
    } catch (error) {
      throw this.#failure(error, 'get', location)
    }
  }

  /**
   * A listing of at most one key from the key itself (no key with that prefix sorts before it),
   * not a HEAD: a HEAD's error has no body, so a missing bucket or a refused key would read as a
   * 403 or 404 without a name. The uploader's size check lists too, so no further permission.
   */
  async exists(location: string): Promise<boolean> {
    try {
      const { key } = this.#object(location)
      const page = await this.#client.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: key, MaxKeys: 1 }))
      return page.Contents?.[0]?.Key === key
    } catch (error) {
      throw this.#failure(error, 'exists', location)
    }
  }

  async delete(location: string): Promise<boolean> {
    // S3 deletes a missing key without a word: the HEAD before it says whether there was one.
    const existed = await this.exists(location)
    if (!existed) return false
    try {
      const { key } = this.#object(location)
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }))
      return true
    } catch (error) {
      throw this.#failure(error, 'delete', location)
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const parsed = this.#object(prefix, false)
    const base = `${parsed.scheme}://${parsed.bucket}/`
    try {
      const pages = paginateListObjectsV2({ client: this.#client }, { Bucket: this.#bucket, Prefix: parsed.key })
      for await (const page of pages) {
        for (const item of page.Contents ?? []) {
          if (item.Key === undefined) continue
          // S3 always says; an object whose age were unknown counts as just written, never as old
          const lastModified = item.LastModified?.getTime() ?? Date.now()
          yield { location: base + item.Key, size: item.Size ?? 0, lastModified }
        }
      }
    } catch (error) {
      throw this.#failure(error, 'list', prefix)
    }
  }

  /** Ends the client's sockets (tests, and a CLI command that is done). */
  close(): void {
    this.#client.destroy()
  }

  #failure(error: unknown, operation: string, location: string): unknown {
    return s3Failure(error, operation, location, this.#bucket)
  }
}
