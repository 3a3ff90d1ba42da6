// Objects in Azure Blob Storage through the Blob API (@azure/storage-blob). Not the Data Lake API:
// Azurite has no DFS endpoint, and block blobs are readable through both APIs on a
// hierarchical-namespace account anyway.
//
// Locations use Iceberg's ADLS form, `abfs[s]://<container>@<account>.dfs.core.windows.net/<path>`
// (`wasb[s]://<container>@<account>.blob.core.windows.net/<path>` is read too): Iceberg's Java
// ADLSFileIO and pyiceberg's fsspec/adlfs IO both open it; the host names the account only, the
// blob endpoint comes from configuration, which is how the same location works on Azurite.
import {
  AnonymousCredential,
  BlobServiceClient,
  type ContainerClient,
  isRestError,
  type StoragePipelineOptions,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { FloeError } from '../errors.ts'
import type { ObjectStorage, StorageCallOptions, StoredObject } from './object-storage.ts'

export interface AzureBlobConfig {
  /** `DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...;BlobEndpoint=...` (Azurite's form works). */
  connectionString?: string
  accountName?: string
  accountKey?: string
  /** A SAS token (a catalog's vended `adls.sas-token.<account>`), with accountName. */
  sasToken?: string
  /** Defaults to https://<account>.blob.core.windows.net. */
  blobEndpoint?: string
  /** Per-try timeout of the SDK's own retries (it retries transient failures itself). */
  tryTimeoutMs?: number
  maxTries?: number
}

export interface AzureLocation {
  scheme: string
  container: string
  host: string
  account: string
  path: string
}

const azureLocation = /^(abfss?|wasbs?):\/\/([^@/]+)@([^/]+?)(?:\/(.*))?$/i

export function parseAzureLocation(location: string): AzureLocation {
  const match = azureLocation.exec(location)
  if (!match) throw new FloeError('CONFIG_INVALID', `not an Azure location: ${location}`, { details: { location } })
  const host = match[3]!
  return {
    scheme: match[1]!.toLowerCase(),
    container: match[2]!,
    host,
    account: host.split('.')[0]!,
    path: match[4] ?? '',
  }
}

function failure(error: unknown, operation: string, location: string): unknown {
  if (error instanceof FloeError || (error as Error | undefined)?.name === 'AbortError') return error
  const status = isRestError(error) ? error.statusCode : undefined
  const code = isRestError(error) ? error.code : undefined
  const details = { location, operation, status, code }
  if (status === 404 && operation === 'get') {
    return new FloeError('STORAGE_NOT_FOUND', `no object at ${location}`, { cause: error, details })
  }
  return new FloeError(
    'STORAGE_UNAVAILABLE',
    `Azure ${operation} failed for ${location}: ${status ?? code ?? 'error'}`,
    {
      cause: error,
      details,
    },
  )
}

/** Upload blocks of 8 MiB, 4 at a time: measured at 358 MB/s on Azurite (docs/decisions.md, "Azure uploads"). */
const blockSize = 8 * 1024 * 1024
const concurrency = 4

export class AzureBlobStorage implements ObjectStorage {
  readonly #service: BlobServiceClient
  readonly #containers = new Map<string, ContainerClient>()

  constructor(config: AzureBlobConfig) {
    const pipeline: StoragePipelineOptions = {
      retryOptions: { maxTries: config.maxTries ?? 4, tryTimeoutInMs: config.tryTimeoutMs ?? 60_000 },
    }
    if (config.connectionString) {
      this.#service = BlobServiceClient.fromConnectionString(config.connectionString, pipeline)
    } else if (config.accountName && config.accountKey) {
      const endpoint = config.blobEndpoint ?? `https://${config.accountName}.blob.core.windows.net`
      const credential = new StorageSharedKeyCredential(config.accountName, config.accountKey)
      this.#service = new BlobServiceClient(endpoint, credential, pipeline)
    } else if (config.accountName && config.sasToken) {
      const endpoint = config.blobEndpoint ?? `https://${config.accountName}.blob.core.windows.net`
      const url = `${endpoint.replace(/\/+$/, '')}?${config.sasToken.replace(/^\?/, '')}`
      this.#service = new BlobServiceClient(url, new AnonymousCredential(), pipeline)
    } else {
      throw new FloeError('CONFIG_INVALID', 'Azure storage needs a connection string, or an account name and key')
    }
  }

  /** The account the credentials are for; a location naming another account is refused. */
  get accountName(): string {
    return this.#service.accountName
  }

  #container(location: string) {
    const parsed = parseAzureLocation(location)
    if (this.accountName && parsed.account !== this.accountName) {
      throw new FloeError(
        'CONFIG_INVALID',
        `location ${location} is in account ${parsed.account}, storage is configured for ${this.accountName}`,
        { details: { location } },
      )
    }
    let container = this.#containers.get(parsed.container)
    if (container === undefined) {
      container = this.#service.getContainerClient(parsed.container)
      this.#containers.set(parsed.container, container)
    }
    return { parsed, container }
  }

  #blob(location: string) {
    const { parsed, container } = this.#container(location)
    if (parsed.path === '')
      throw new FloeError('CONFIG_INVALID', `no blob name in ${location}`, { details: { location } })
    return container.getBlockBlobClient(parsed.path)
  }

  async put(location: string, bytes: Uint8Array, options: StorageCallOptions = {}): Promise<void> {
    try {
      const blob = this.#blob(location)
      await blob.uploadData(bytes, { blockSize, concurrency, abortSignal: options.signal })
    } catch (error) {
      throw failure(error, 'put', location)
    }
  }

  async putFile(location: string, localPath: string, options: StorageCallOptions = {}): Promise<void> {
    try {
      const blob = this.#blob(location)
      // uploadFile reads the file in block-sized ranges: never whole in memory.
      await blob.uploadFile(localPath, { blockSize, concurrency, abortSignal: options.signal })
    } catch (error) {
      throw failure(error, 'put', location)
    }
  }

  async get(location: string, options: StorageCallOptions = {}): Promise<Uint8Array> {
    try {
      const blob = this.#blob(location)
      const buffer = await blob.downloadToBuffer(0, undefined, { abortSignal: options.signal })
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    } catch (error) {
      throw failure(error, 'get', location)
    }
  }

  async exists(location: string): Promise<boolean> {
    try {
      return await this.#blob(location).exists()
    } catch (error) {
      throw failure(error, 'exists', location)
    }
  }

  async delete(location: string): Promise<boolean> {
    try {
      return (await this.#blob(location).deleteIfExists()).succeeded
    } catch (error) {
      throw failure(error, 'delete', location)
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const { parsed, container } = this.#container(prefix)
    const base = `${parsed.scheme}://${parsed.container}@${parsed.host}/`
    try {
      for await (const item of container.listBlobsFlat({ prefix: parsed.path })) {
        yield {
          location: base + item.name,
          size: item.properties.contentLength ?? 0,
          lastModified: item.properties.lastModified.getTime(),
        }
      }
    } catch (error) {
      throw failure(error, 'list', prefix)
    }
  }
}
