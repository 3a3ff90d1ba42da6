// How the CLI reaches the servers a configuration names: the Kafka connection, the catalog and
// storage settings, the dataset's consumer group, and one-line reasons when a server does not
// answer. Shared by `floe run`, `validate`, `status` and `observe`.
import type { CatalogConfig } from '../shared/catalog/index.ts'
import { type DatasetConfig, type FloeConfig, loadConfig, type StorageConfig } from '../shared/config/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import { type KafkaConnection, kafkaConnectionFailureOf } from '../shared/kafka/index.ts'
import { namedStorageFailure, RoutedStorage } from '../shared/storage/index.ts'

/**
 * The root cause of a failure in words ("connection refused"), not a stack. Follows causes and the
 * Kafka client's MultipleErrors (an `errors` list that is not an AggregateError) down to the socket.
 * A failed TLS handshake or a refused authentication says so first ("TLS handshake failed: ...").
 */
export function reasonOf(error: unknown): string {
  const failure = kafkaConnectionFailureOf(error)
  if (failure && failure.kind !== 'unreachable') return failure.reason
  let current: unknown = error
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    // A missing bucket or refused credentials: the storage's own words name what to fix.
    const storage = namedStorageFailure(current)
    if (storage !== undefined) return storage
    const code = (current as NodeJS.ErrnoException).code
    if (code === 'ECONNREFUSED') return 'connection refused'
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
    if (code === 'ETIMEDOUT') return 'connection timed out'
    const errors = (current as { errors?: unknown }).errors
    if (Array.isArray(errors) && errors.length > 0) current = errors[0]
    else if (current.cause !== undefined) current = current.cause
    else break
  }
  return messageOf(current ?? error)
}

/** What a server out of reach is called. */
type ServerCode = 'KAFKA_UNAVAILABLE' | 'CATALOG_UNAVAILABLE' | 'STORAGE_UNAVAILABLE'

/**
 * Runs `work`; a failure or no answer within `ms` becomes a FloeError of `code` whose message
 * names `server` (details.server) and the reason in one line. A Kafka connection that failed its
 * TLS handshake or its authentication becomes KAFKA_TLS_FAILED or KAFKA_AUTHENTICATION_FAILED
 * instead: fatal, since trying the same certificates or credentials again cannot succeed.
 */
export async function reach<T>(server: string, code: ServerCode, ms: number, work: () => Promise<T>): Promise<T> {
  try {
    return await answerWithin(server, code, ms, work)
  } catch (error) {
    throw serverFailure(server, code, error)
  }
}

/** A failure to reach `server`, as `reach` names it: one FloeError of `code` (or the fatal one it is). */
export function serverFailure(server: string, code: ServerCode, error: unknown): FloeError {
  if (isFloeError(error) && error.details['server'] !== undefined) return error
  const failure = code === 'KAFKA_UNAVAILABLE' ? kafkaConnectionFailureOf(error) : undefined
  // A server that refused Floe (CATALOG_REFUSED) stays fatal: asking again cannot succeed.
  const refused = isFloeError(error) && error.fatal ? error.code : undefined
  return new FloeError(
    refused ?? (failure?.kind === 'unreachable' ? code : (failure?.code ?? code)),
    `${server}: ${reasonOf(error)}`,
    { cause: error, details: { server } },
  )
}

/**
 * Runs `work`, and gives up on it after `ms` with a FloeError of `code` naming `server` and the
 * wait. Its own failures pass as they are (unlike `reach`, which names the server in every one):
 * for a step whose errors already say what is wrong, and which may wait on a server that hangs.
 */
export async function answerWithin<T>(
  server: string,
  code: ServerCode,
  ms: number,
  work: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // The wait as the cause: a check that reports only the reason (`reasonOf`) says "no answer
      // within 10 s" after its own name for the server, not the server twice.
      const silence = new Error(`no answer within ${ms / 1000} s`)
      reject(new FloeError(code, `${server}: ${silence.message}`, { cause: silence, details: { server } }))
    }, ms)
  })
  try {
    return await Promise.race([work(), timeout])
  } finally {
    clearTimeout(timer)
  }
}

export function kafkaConnectionOf(config: FloeConfig, suffix: string, connectTimeoutMs?: number): KafkaConnection {
  const { kafka } = config
  return {
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-${suffix}`,
    ...(kafka.ssl ? { ssl: kafka.ssl } : {}),
    // The configuration's own object: the connections of one process share its OAuth token.
    ...(kafka.sasl ? { sasl: kafka.sasl } : {}),
    ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
  }
}

/** The consumer group of a dataset (CONFIG.md: `<groupPrefix>-<dataset name>`). */
export function datasetGroup(config: FloeConfig, dataset: string): string {
  return `${config.kafka.groupPrefix}-${dataset}`
}

export function catalogConfigOf(config: FloeConfig, storage: RoutedStorage): CatalogConfig {
  return config.catalog.type === 'rest'
    ? {
        type: 'rest' as const,
        uri: config.catalog.uri,
        ...(config.catalog.warehouse ? { warehouse: config.catalog.warehouse } : {}),
        ...(config.catalog.token ? { token: config.catalog.token } : {}),
        ...(config.catalog.credential
          ? {
              credential: config.catalog.credential,
              scope: config.catalog.scope,
              ...(config.catalog.oauth2ServerUri ? { oauth2ServerUri: config.catalog.oauth2ServerUri } : {}),
            }
          : {}),
        ...(config.catalog.accessDelegation ? { accessDelegation: config.catalog.accessDelegation } : {}),
        requestTimeoutMs: config.catalog.requestTimeoutSeconds * 1000,
      }
    : {
        type: 'sql' as const,
        ...(config.catalog.postgres ? { postgres: config.catalog.postgres } : { path: config.catalog.path }),
        name: config.catalog.name,
        warehouse: config.catalog.warehouse,
        storage,
      }
}

/**
 * A storage client for the top-level `storage`, or for a dataset's (its own, else the top-level
 * one). Each call makes a client of its own: a dataset's outage does not hold another's requests.
 */
export function storageOf(config: FloeConfig, dataset?: DatasetConfig): RoutedStorage {
  const storage: StorageConfig = dataset?.storage ?? config.storage
  if (storage.type === 's3') return new RoutedStorage({ s3: storage.s3 })
  if (storage.type !== 'azure') return new RoutedStorage({})
  const { connectionString, blobEndpoint } = storage.azure
  return new RoutedStorage({
    azure: { ...(connectionString ? { connectionString } : {}), ...(blobEndpoint ? { blobEndpoint } : {}) },
  })
}

/** Where a command writes: process.stdout / stderr, or a test's buffer. */
export interface Output {
  write(text: string): unknown
}

/** The configuration, or undefined after one line on stderr: `floe <command>: <key path>: <problem>`. */
export function configFor(
  command: string,
  path: string | undefined,
  stderr: Output = process.stderr,
): FloeConfig | undefined {
  try {
    return loadConfig(path)
  } catch (error) {
    stderr.write(`floe ${command}: ${messageOf(error)}\n`)
    return undefined
  }
}
