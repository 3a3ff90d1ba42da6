// `floe validate`: checks the configuration file, then reaches every server it names — Kafka, the
// catalog, the storage — and each dataset's topic and table. Prints one line per check and exits
// non-zero when any check fails, naming the server and the problem (never a stack trace).
import { type Catalog, openCatalog } from '../shared/catalog/index.ts'
import { type FloeConfig, loadConfig } from '../shared/config/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import { KafkaAdmin } from '../shared/kafka/index.ts'
import { RoutedStorage } from '../shared/storage/index.ts'

export interface Check {
  what: string
  ok: boolean
  detail: string
}

async function within<T>(ms: number, what: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  try {
    return await Promise.race([work(), timeout])
  } catch (error) {
    throw new Error(`${what}: ${reasonOf(error)}`)
  } finally {
    clearTimeout(timer)
  }
}

/** The root cause of a failure in words: "connection refused", not a stack. */
function reasonOf(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code
    if (code === 'ECONNREFUSED') return 'connection refused'
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
    if (code === 'ETIMEDOUT') return 'connection timed out'
    if (current instanceof AggregateError && current.errors.length) current = current.errors[0]
    else if (current.cause !== undefined) current = current.cause
    else break
  }
  return messageOf(current ?? error)
}

export function catalogConfigOf(config: FloeConfig, storage: RoutedStorage) {
  return config.catalog.type === 'rest'
    ? {
        type: 'rest' as const,
        uri: config.catalog.uri,
        ...(config.catalog.warehouse ? { warehouse: config.catalog.warehouse } : {}),
        ...(config.catalog.token ? { token: config.catalog.token } : {}),
      }
    : {
        type: 'sql' as const,
        path: config.catalog.path,
        name: config.catalog.name,
        warehouse: config.catalog.warehouse,
        storage,
      }
}

export function storageOf(config: FloeConfig): RoutedStorage {
  return new RoutedStorage(
    config.storage.type === 'azure' ? { azure: { connectionString: config.storage.azure.connectionString } } : {},
  )
}

export async function validate(config: FloeConfig, timeoutMs = 10_000): Promise<Check[]> {
  const checks: Check[] = [
    { what: 'config', ok: true, detail: `${config.source}: ${config.datasets.length} dataset(s)` },
  ]
  const record = async (what: string, work: () => Promise<string>) => {
    try {
      checks.push({ what, ok: true, detail: await work() })
    } catch (error) {
      checks.push({ what, ok: false, detail: reasonOf(error) })
    }
  }

  const admin = new KafkaAdmin({
    brokers: config.kafka.brokers,
    clientId: config.kafka.clientId,
    connectTimeoutMs: timeoutMs,
  })
  let kafkaOk = false
  await record(`kafka ${config.kafka.brokers.join(',')}`, async () => {
    await within(timeoutMs, 'kafka', () => admin.partitionCount(config.kafka.controlTopic))
    kafkaOk = true
    return 'reachable'
  })
  const storage = storageOf(config)
  let catalog: Catalog | undefined
  await record(
    config.catalog.type === 'rest' ? `catalog ${config.catalog.uri}` : `catalog ${config.catalog.path}`,
    async () => {
      catalog = await within(timeoutMs, 'catalog', () => openCatalog(catalogConfigOf(config, storage)))
      return `reachable (${catalog.description})`
    },
  )
  for (const dataset of config.datasets) {
    if (kafkaOk) {
      await record(`dataset ${dataset.name}: topic ${dataset.topic}`, async () => {
        const partitions = await within(timeoutMs, 'kafka', () => admin.partitionCount(dataset.topic))
        if (partitions === undefined) throw new FloeError('CONFIG_INVALID', `topic ${dataset.topic} does not exist`)
        return `${partitions} partition(s)`
      })
    }
    if (catalog) {
      const opened = catalog
      await record(`dataset ${dataset.name}: table ${dataset.table}`, async () => {
        const exists = await within(timeoutMs, 'catalog', () =>
          opened.tableExists({ namespace: dataset.namespace, name: dataset.tableName }),
        )
        return exists ? 'exists' : 'will be created on first run'
      })
    }
  }
  await admin.close().catch(() => {})
  await catalog?.close().catch(() => {})
  return checks
}

export async function runValidate(configPath: string | undefined): Promise<number> {
  let config: FloeConfig
  try {
    config = loadConfig(configPath)
  } catch (error) {
    console.error(`floe validate: ${messageOf(error)}`)
    return 2
  }
  const checks = await validate(config)
  for (const check of checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.what}: ${check.detail}`)
  return checks.every((c) => c.ok) ? 0 : 1
}
