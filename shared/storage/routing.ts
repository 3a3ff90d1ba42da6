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

/** The backend of this location's scheme; undefined for a scheme none serves. */
function backendOf(location: string): Backend | undefined {
  switch (schemeOf(location)) {
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
      return undefined
  }
}

function backendFor(location: string): Backend {
  const backend = backendOf(location)
  if (backend !== undefined) return backend
  const scheme = schemeOf(location)
  throw new FloeError('CONFIG_INVALID', `no storage for ${scheme || 'scheme-less'} locations (${location})`, {
    details: { location, scheme },
  })
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

/** The configured S3 with the keys vended under S3FileIO's names; undefined without both keys. */
function vendedS3(s3: S3Config | undefined, properties: Readonly<Record<string, string>>): S3Config | undefined {
  const accessKeyId = properties['s3.access-key-id']
  const secretAccessKey = properties['s3.secret-access-key']
  if (!accessKeyId || !secretAccessKey || s3 === undefined) return undefined
  const sessionToken = properties['s3.session-token'] || undefined
  return { ...s3, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
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
  /** Credentials vended for one location prefix (a routed table's), by prefix, each with its own client. */
  readonly #scoped = new Map<string, { vended: string; storage: ObjectStorage }>()

  constructor(config: StorageConfig = {}) {
    this.#config = config
  }

  #for(location: string): ObjectStorage {
    // the longest scope the location is under; a storage call is per file, never per record
    let scoped: ObjectStorage | undefined
    let length = -1
    for (const [prefix, { storage }] of this.#scoped) {
      if (prefix.length > length && location.startsWith(prefix)) {
        scoped = storage
        length = prefix.length
      }
    }
    return scoped ?? this.#backend(backendFor(location))
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
   * storage-credentials entry for the table's location): used from now on for their accounts, or,
   * with a `scope`, only for the locations under it. A catalog that scopes each table's
   * credentials to the table's location vends every routed table its own; each is kept for its
   * table, where the dataset's table's credentials (renewed every round) would be refused.
   */
  useVendedCredentials(properties: Readonly<Record<string, string>>, scope?: string): void {
    if (scope !== undefined) {
      this.#useScoped(properties, scope)
      return
    }
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
    const s3 = vendedS3(this.#config.s3, properties)
    if (s3 === undefined) return
    const vended = `${s3.accessKeyId}\n${s3.secretAccessKey}\n${s3.sessionToken ?? ''}`
    if (vended === this.#vendedS3) return
    this.#vendedS3 = vended
    this.#backends.set('s3', new S3Storage(s3))
  }

  #useScoped(properties: Readonly<Record<string, string>>, scope: string): void {
    const vended = JSON.stringify(
      Object.entries(properties)
        .filter(([key]) => key.startsWith('adls.') || key.startsWith('s3.'))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    )
    if (this.#scoped.get(scope)?.vended === vended) return
    let storage: ObjectStorage | undefined
    // a scope no backend serves has nothing to be written with: a call there fails as it would have
    const backend = backendOf(scope)
    if (backend === 'azure' && Object.keys(properties).some((key) => key.startsWith('adls.sas-token.'))) {
      const azure = new AzureAccountsStorage(this.#config.azure ?? {})
      azure.useVendedCredentials(properties)
      storage = azure
    } else if (backend === 's3') {
      const s3 = vendedS3(this.#config.s3, properties)
      if (s3 !== undefined) storage = new S3Storage(s3)
    }
    if (storage !== undefined) this.#scoped.set(scope, { vended, storage })
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
