// The one storage seam: objects keyed by the full location URIs Iceberg records in metadata and
// manifests (file:///..., abfs://container@account.dfs.core.windows.net/..., s3://bucket/...), so a location read
// from a table is used as it is, and a location Floe writes is one every Iceberg reader opens.

export interface StoredObject {
  location: string
  size: number
  /** When the object was last written, in epoch milliseconds, by the store's clock. */
  lastModified: number
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

/** Schemes that name one store under several spellings, each mapped to one of them. */
const sameStore: Readonly<Record<string, string>> = {
  s3a: 's3',
  s3n: 's3',
  abfss: 'abfs',
  wasb: 'abfs',
  wasbs: 'abfs',
}

/**
 * One spelling for every way of writing the location of one object, to compare locations written
 * by different engines: a table's metadata may name `s3a://b/k`, `file:/p` or
 * `wasbs://c@a.blob.core.windows.net/k` where a listing answers `s3://b/k`, `file:///p` or
 * `abfss://c@a.dfs.core.windows.net/k`. Scheme and authority lose their case, an Azure host
 * becomes its account (its dfs and blob endpoints are one store), percent-escapes are decoded,
 * repeated and trailing slashes are dropped. For comparison only: the result need not be a
 * location any storage serves. Each rule only ever makes more locations equal, never fewer, the
 * safe side for a caller that keeps whatever is still referenced.
 */
export function locationKey(location: string): string {
  const scheme = schemeOf(location)
  if (scheme === '') return pathKey(location)
  const rest = location.startsWith('/') ? location : location.slice(scheme.length + 1)
  const store = sameStore[scheme] ?? scheme
  if (store === 'file') return `file://${pathKey(rest.replace(/^\/\/(?:localhost)?(?=\/)/i, ''))}`
  const authority = /^\/\/([^/]*)(.*)$/s.exec(rest)
  if (!authority) return `${store}:${pathKey(rest)}`
  let host = authority[1]!.toLowerCase()
  if (store === 'abfs') host = host.replace(/^([^@]*@[^.]*)\..*$/, '$1')
  return `${store}://${host}${pathKey(authority[2]!)}`
}

function pathKey(path: string): string {
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // a lone `%` is a character of the name, not an escape
  }
  return decoded.replace(/\/{2,}/g, '/').replace(/\/+$/, '')
}
