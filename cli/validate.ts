// `floe validate`: checks the configuration file, then reaches every server it names — Kafka, the
// catalog, the storage — and each dataset's topic and table. Prints one line per check and exits
// non-zero when any check fails, naming the server and the problem (never a stack trace).
import { type Catalog, openCatalog } from '../shared/catalog/index.ts'
import type { FloeConfig } from '../shared/config/index.ts'
import { FloeError } from '../shared/index.ts'
import { KafkaAdmin } from '../shared/kafka/index.ts'
import { catalogConfigOf, configFor, reach, reasonOf, storageOf } from './servers.ts'

export interface Check {
  what: string
  ok: boolean
  detail: string
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
    await reach('kafka', 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(config.kafka.controlTopic))
    kafkaOk = true
    return 'reachable'
  })
  const storage = storageOf(config)
  let catalog: Catalog | undefined
  await record(
    config.catalog.type === 'rest' ? `catalog ${config.catalog.uri}` : `catalog ${config.catalog.path}`,
    async () => {
      catalog = await reach('catalog', 'CATALOG_UNAVAILABLE', timeoutMs, () =>
        openCatalog(catalogConfigOf(config, storage)),
      )
      return `reachable (${catalog.description})`
    },
  )
  for (const dataset of config.datasets) {
    if (kafkaOk) {
      await record(`dataset ${dataset.name}: topic ${dataset.topic}`, async () => {
        const partitions = await reach('kafka', 'KAFKA_UNAVAILABLE', timeoutMs, () =>
          admin.partitionCount(dataset.topic),
        )
        if (partitions === undefined) throw new FloeError('CONFIG_INVALID', `topic ${dataset.topic} does not exist`)
        return `${partitions} partition(s)`
      })
    }
    if (catalog) {
      const opened = catalog
      await record(`dataset ${dataset.name}: table ${dataset.table}`, async () => {
        const exists = await reach('catalog', 'CATALOG_UNAVAILABLE', timeoutMs, () =>
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
  const config = configFor('validate', configPath)
  if (!config) return 2
  const checks = await validate(config)
  for (const check of checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.what}: ${check.detail}`)
  return checks.every((c) => c.ok) ? 0 : 1
}
