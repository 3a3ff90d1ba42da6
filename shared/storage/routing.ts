// Picks the storage for a location by its scheme. One place knows the schemes: a new backend is
// one more case here and one more file beside azure.ts and s3.ts.
import { FloeError } from '../errors.ts'
import { type AzureAccountsConfig, AzureAccountsStorage } from './azure-vended.ts'
import { LocalFileStorage } from './local.ts'
import { type ObjectStorage, type StorageCallOptions, type StoredObject, schemeOf } from './object-storage.ts'
import { type S3Config, S3Storage } from './s3.ts'

export interface StorageConfig {
  azure?: AzureAccountsConfig
  s3?: S3Config
}

type Backend = 'local' | 'azure' | 's3'

function backendFor(location: string): Backend {
  const scheme = schemeOf(location)
  switch (scheme) {
    case 'file':
      return 'local'
    case 'abfs':
    case 'abfss':
    case 'wasb':
    case 'wasbs':
      return 'azure'
    case 's3':
    case 's3a':
      return 's3'
    default:
      throw new FloeError('CONFIG_INVALID', `no storage for ${scheme || 'scheme-less'} locations (${location})`, {
        details: { location, scheme },
      })
  }
}

function create(backend: Backend, config: StorageConfig): ObjectStorage {
  if (backend === 'local') return new LocalFileStorage()
  if (backend === 's3') {
    if (config.s3 === undefined)
      throw new FloeError('CONFIG_INVALID', 'an S3 location needs storage.s3 to be configured')
    return new S3Storage(config.s3)
  }
  // Without storage.azure, only an account whose SAS the catalog vends can be reached.
  return new AzureAccountsStorage(config.azure ?? {})
}

/** The storage implementation for this location's scheme. */
export function storageFor(location: string, config: StorageConfig = {}): ObjectStorage {
  const backend = backendFor(location)
  // Alone, with nothing to hand it vended credentials, an unconfigured Azure could reach nothing.
  if (backend === 'azure' && config.azure === undefined) {
    throw new FloeError('CONFIG_INVALID', 'an Azure location needs storage.azure to be configured')
  }
  return create(backend, config)
}

/**
 * One ObjectStorage over every configured scheme: each call goes to the implementation for its
 * location's scheme, each made once, on first use. What a catalog or writer that meets locations
 * of more than one kind should hold.
 */
export class RoutedStorage implements ObjectStorage {
  readonly #config: StorageConfig
  readonly #backends = new Map<Backend, ObjectStorage>()
  /** The S3 credentials last vended, so that an unchanged set keeps its client. */
  #vendedS3: string | undefined

  constructor(config: StorageConfig = {}) {
    this.#config = config
  }

  #for(location: string): ObjectStorage {
    return this.#backend(backendFor(location))
  }

  #backend(backend: Backend): ObjectStorage {
    let storage = this.#backends.get(backend)
    if (storage === undefined) {
      storage = create(backend, this.#config)
      this.#backends.set(backend, storage)
    }
    return storage
  }

  /**
   * Storage credentials a REST catalog vended with a loaded table (its `config`, or the
   * storage-credentials entry for the table's location): used from now on for their accounts.
   */
  useVendedCredentials(properties: Readonly<Record<string, string>>): void {
    this.#useVendedS3(properties)
    if (!Object.keys(properties).some((key) => key.startsWith('adls.sas-token.'))) return
    const azure = this.#backend('azure')
    if (azure instanceof AzureAccountsStorage) azure.useVendedCredentials(properties)
  }

  /**
   * S3 keys as Iceberg's S3FileIO names them (`s3.access-key-id`, `s3.secret-access-key`,
   * `s3.session-token`): a client of their own replaces the S3 client from the next call on. The
   * old one is not closed: an upload in flight on it finishes with the credentials it began with.
   */
  #useVendedS3(properties: Readonly<Record<string, string>>): void {
    const accessKeyId = properties['s3.access-key-id']
    const secretAccessKey = properties['s3.secret-access-key']
    const s3 = this.#config.s3
    if (!accessKeyId || !secretAccessKey || s3 === undefined) return
    const sessionToken = properties['s3.session-token'] || undefined
    const vended = `${accessKeyId}\n${secretAccessKey}\n${sessionToken ?? ''}`
    if (vended === this.#vendedS3) return
    this.#vendedS3 = vended
    this.#backends.set(
      's3',
      new S3Storage({ ...s3, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }),
    )
  }

  put(location: string, bytes: Uint8Array, options?: StorageCallOptions): Promise<void> {
    return this.#for(location).put(location, bytes, options)
  }

  putFile(location: string, localPath: string, options?: StorageCallOptions): Promise<void> {
    return this.#for(location).putFile(location, localPath, options)
  }

  get(location: string, options?: StorageCallOptions): Promise<Uint8Array> {
    return this.#for(location).get(location, options)
  }

  exists(location: string): Promise<boolean> {
    return this.#for(location).exists(location)
  }

  delete(location: string): Promise<boolean> {
    return this.#for(location).delete(location)
  }

  list(prefix: string): AsyncIterable<StoredObject> {
    return this.#for(prefix).list(prefix)
  }
}
