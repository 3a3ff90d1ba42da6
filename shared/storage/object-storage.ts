// The one storage seam: objects keyed by the full location URIs Iceberg records in metadata and
// manifests (file:///..., abfs://container@account.dfs.core.windows.net/..., s3://bucket/...), so a location read
// from a table is used as it is, and a location Floe writes is one every Iceberg reader opens.

export interface StoredObject {
  location: string
  size: number
}

export interface StorageCallOptions {
  signal?: AbortSignal
}

/**
 * Errors: STORAGE_NOT_FOUND for a missing object on get; STORAGE_UNAVAILABLE for anything that
 * may pass (network, throttling, permissions, a full disk); CONFIG_INVALID for a location this
 * storage cannot serve. An abort rejects with the signal's AbortError, untouched.
 */
export interface ObjectStorage {
  /** Writes the object whole; a repeated put of the same location replaces it. */
  put(location: string, bytes: Uint8Array, options?: StorageCallOptions): Promise<void>
  /** Like put, streamed from a local file (never read into memory whole). */
  putFile(location: string, localPath: string, options?: StorageCallOptions): Promise<void>
  get(location: string, options?: StorageCallOptions): Promise<Uint8Array>
  exists(location: string): Promise<boolean>
  /** Deletes the object; false when there was none. */
  delete(location: string): Promise<boolean>
  /** Every object whose location starts with `prefix`, in the prefix's URI form. */
  list(prefix: string): AsyncIterable<StoredObject>
}

/** The scheme of a location, lower case; a bare absolute path counts as `file`. */
export function schemeOf(location: string): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(location)
  if (match) return match[1]!.toLowerCase()
  return location.startsWith('/') ? 'file' : ''
}
