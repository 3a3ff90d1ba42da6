// Azure Blob storage whose credentials may come from the catalog: a REST catalog asked for vended
// credentials answers loadTable with `adls.sas-token.<account>` (Iceberg's ADLS FileIO key; the
// account as `<name>` or `<name>.dfs.core.windows.net`) in the table's config or its
// storage-credentials, and the dataset's storage uses that SAS for the account from then on,
// replacing it whenever a later load vends another. An account with no SAS vended uses the
// configured connection string, if any. `adls.connection-string.<account>` (Iceberg Java reads an
// endpoint URL there) gives the endpoint; else the configured blobEndpoint, else Azure's own.
import { FloeError } from '../errors.ts'
import { AzureBlobStorage, parseAzureLocation } from './azure.ts'
import type { ObjectStorage, StorageCallOptions, StoredObject } from './object-storage.ts'

export interface AzureAccountsConfig {
  connectionString?: string
  /** The blob endpoint of vended-credential clients (Azurite's, a sovereign cloud's). */
  blobEndpoint?: string
}

const sasKey = /^adls\.sas-token\.([^.]+)(\..*)?$/

/** The endpoint a vended `adls.connection-string.<account>` names, as the Blob API wants it. */
function vendedEndpoint(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const named = /(?:^|;)BlobEndpoint=([^;]+)/.exec(value)?.[1]
  const url = named ?? (/^https?:\/\//.test(value) ? value : undefined)
  return url?.replace('.dfs.core.windows.net', '.blob.core.windows.net')
}

export class AzureAccountsStorage implements ObjectStorage {
  readonly #configured: AzureBlobStorage | undefined
  readonly #blobEndpoint: string | undefined
  readonly #vended = new Map<string, { sas: string; storage: AzureBlobStorage }>()

  constructor(config: AzureAccountsConfig) {
    this.#configured = config.connectionString ? new AzureBlobStorage(config) : undefined
    this.#blobEndpoint = config.blobEndpoint
  }

  /** Takes the SAS tokens among a loaded table's properties; an unchanged one keeps its client. */
  useVendedCredentials(properties: Readonly<Record<string, string>>): void {
    for (const [key, sas] of Object.entries(properties)) {
      const match = sasKey.exec(key)
      if (!match || sas === '') continue
      const account = match[1]!
      if (this.#vended.get(account)?.sas === sas) continue
      const endpoint =
        vendedEndpoint(properties[`adls.connection-string.${account}${match[2] ?? ''}`]) ?? this.#blobEndpoint
      const storage = new AzureBlobStorage({
        accountName: account,
        sasToken: sas,
        ...(endpoint ? { blobEndpoint: endpoint } : {}),
      })
      this.#vended.set(account, { sas, storage })
    }
  }

  #for(location: string): AzureBlobStorage {
    const { account } = parseAzureLocation(location)
    const storage = this.#vended.get(account)?.storage ?? this.#configured
    if (storage === undefined) {
      throw new FloeError(
        'STORAGE_UNAVAILABLE',
        `no credentials for Azure account ${account}: none configured, and the catalog has vended none (yet)`,
        { details: { location } },
      )
    }
    return storage
  }

  async put(location: string, bytes: Uint8Array, options?: StorageCallOptions): Promise<void> {
    return this.#for(location).put(location, bytes, options)
  }

  async putFile(location: string, localPath: string, options?: StorageCallOptions): Promise<void> {
    return this.#for(location).putFile(location, localPath, options)
  }

  async get(location: string, options?: StorageCallOptions): Promise<Uint8Array> {
    return this.#for(location).get(location, options)
  }

  async exists(location: string): Promise<boolean> {
    return this.#for(location).exists(location)
  }

  async delete(location: string): Promise<boolean> {
    return this.#for(location).delete(location)
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    yield* this.#for(prefix).list(prefix)
  }
}
