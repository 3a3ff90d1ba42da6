// `floe validate`: checks the configuration file, then reaches every server it names the way
// `floe run` does — Kafka with the same connection (TLS, SASL), the catalog, each dataset's
// storage (its own `storage` when it has one) — and each dataset's topic and table, whose schema
// it compares with the configuration as a worker does at start. Prints one line per check and
// exits non-zero when any check fails, naming the server and the problem (never a stack trace).
// It changes nothing: a missing table is reported as one the first run creates.
import { type Catalog, type LoadedTable, openCatalog, vendedCredentialsOf } from '../shared/catalog/index.ts'
import { catalogLabel, type DatasetConfig, type FloeConfig } from '../shared/config/index.ts'
import {
  applyUpdates,
  currentSchema,
  dataDirectory,
  describeSchemaChange,
  planSchemaChange,
} from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'
import { KafkaAdmin, kafkaConnectionFailureOf } from '../shared/kafka/index.ts'
import { catalogConfigOf, configFor, kafkaConnectionOf, reach, reasonOf, storageOf } from './servers.ts'
import { checkTableSchema, tableIdentifier } from './tables.ts'
import { withMatchedTopics } from './topic-patterns.ts'

export interface Check {
  what: string
  ok: boolean
  detail: string
}

/** An object name no writer uses: looking it up reaches the storage and reads nothing. */
const PROBE = '.floe-validate-probe'

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

  const admin = new KafkaAdmin(kafkaConnectionOf(config, 'validate', timeoutMs))
  let kafkaOk = false
  const kafkaCheck = `kafka ${config.kafka.brokers.join(',')}`
  try {
    await reach('kafka', 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(config.kafka.controlTopic))
    kafkaOk = true
    const { ssl, sasl } = config.kafka
    checks.push({
      what: kafkaCheck,
      ok: true,
      detail: `reachable${ssl ? ', TLS' : ''}${sasl ? `, SASL ${sasl.mechanism} authenticated` : ''}`,
    })
  } catch (error) {
    // Which of the three it is: a TLS handshake, the authentication, or no broker at all.
    const failure = kafkaConnectionFailureOf(error)
    const reason = reasonOf(error)
    const detail = failure?.kind === 'unreachable' || !failure ? `${reason} (broker unreachable)` : reason
    checks.push({ what: kafkaCheck, ok: false, detail })
  }
  let catalog: Catalog | undefined
  await record(`catalog ${catalogLabel(config.catalog)}`, async () => {
    catalog = await reach('catalog', 'CATALOG_UNAVAILABLE', timeoutMs, () =>
      openCatalog(catalogConfigOf(config, storageOf(config))),
    )
    return `reachable (${catalog.description})`
  })
  for (const dataset of config.datasets) {
    const route = dataset.route
    if (route) {
      const fallback = route.fallback === undefined ? '' : `, else ${route.fallback}`
      const detail = `by ${route.field} into ${route.table}${fallback}; progress in ${dataset.table}; at most ${route.maxOpenTables} tables open per worker`
      checks.push({ what: `dataset ${dataset.name}: route`, ok: true, detail })
    }
    if (kafkaOk && dataset.topicPattern) {
      const pattern = dataset.topicPattern
      await record(`dataset ${dataset.name}: topicPattern ${pattern.source}`, async () => {
        const { topics } = await reach('kafka', 'KAFKA_UNAVAILABLE', timeoutMs, () =>
          withMatchedTopics(config, dataset, admin),
        )
        return `matches ${topics.join(', ')}`
      })
    }
    for (const topic of kafkaOk ? dataset.topics : []) {
      await record(`dataset ${dataset.name}: topic ${topic}`, async () => {
        const partitions = await reach('kafka', 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(topic))
        if (partitions === undefined) throw new FloeError('CONFIG_INVALID', `topic ${topic} does not exist`)
        return `${partitions} partition(s)`
      })
    }
    if (catalog) await checkDataset(config, dataset, catalog, timeoutMs, record)
  }
  await admin.close().catch(() => {})
  await catalog?.close().catch(() => {})
  return checks
}

/** The dataset's table (its schema against the configuration) and the storage its files go to. */
async function checkDataset(
  config: FloeConfig,
  dataset: DatasetConfig,
  catalog: Catalog,
  timeoutMs: number,
  record: (what: string, work: () => Promise<string>) => Promise<void>,
): Promise<void> {
  const identifier = tableIdentifier(dataset)
  let table: LoadedTable | undefined
  await record(`dataset ${dataset.name}: table ${dataset.table}`, async () => {
    const exists = await reach('catalog', 'CATALOG_UNAVAILABLE', timeoutMs, () => catalog.tableExists(identifier))
    if (!exists) return 'will be created on first run'
    table = await reach('catalog', 'CATALOG_UNAVAILABLE', timeoutMs, () => catalog.loadTable(identifier))
    if (dataset.schemaEvolution === 'addColumns' || dataset.inferColumns) {
      // what the first worker to start will commit; the check below is of the table after it
      const change = planSchemaChange(table.metadata, dataset.icebergSchema.fields)
      if (change.commit) {
        const evolved = applyUpdates(table.metadata, change.commit.updates, Date.now())
        checkTableSchema(dataset, evolved)
        const why = dataset.inferColumns ? 'declared in schema' : 'schemaEvolution: addColumns'
        return `exists; the first worker adds ${describeSchemaChange(change)} (${why})`
      }
    }
    checkTableSchema(dataset, table.metadata)
    if (dataset.inferColumns) {
      const columns = currentSchema(table.metadata).fields.length
      return `exists with ${columns} column(s); records add the fields it lacks (columns inferred)`
    }
    return 'exists, its schema has every configured column with its type'
  })
  // Where the worker uploads: the table's data location, or the one its first run will give it.
  const location = table
    ? dataDirectory(table.metadata)
    : (dataset.tableProperties['write.data.path'] ?? config.catalog.warehouse)
  const kind = (dataset.storage ?? config.storage).type
  // A dataset without storage of its own holds the top-level one (load.ts), the same object.
  const own = dataset.storage !== undefined && dataset.storage !== config.storage
  const name = `dataset ${dataset.name}: storage ${kind}${own ? ' (its own)' : ''}`
  const storageConfig = dataset.storage ?? config.storage
  if (!table && storageConfig.type === 'azure' && !storageConfig.azure.connectionString) {
    await record(
      name,
      async () => 'not checked: the catalog vends its credentials with the table the first run creates',
    )
    return
  }
  if (location === undefined) {
    await record(name, async () => 'not checked: the catalog chooses the location when it creates the table')
    return
  }
  // The coordinator writes manifests beside the table's metadata, with the same storage client.
  const locations = table ? [location, `${table.metadata.location}/metadata`] : [location]
  await record(`${name} ${location}`, async () => {
    const storage = storageOf(config, dataset)
    if (table) storage.useVendedCredentials(vendedCredentialsOf(table))
    for (const where of locations) {
      await reach(`storage ${where}`, 'STORAGE_UNAVAILABLE', timeoutMs, () =>
        storage.exists(`${where.replace(/\/+$/, '')}/${PROBE}`),
      )
    }
    return 'reachable'
  })
}

export async function runValidate(configPath: string | undefined): Promise<number> {
  const config = configFor('validate', configPath)
  if (!config) return 2
  const checks = await validate(config)
  for (const check of checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.what}: ${check.detail}`)
  return checks.every((c) => c.ok) ? 0 : 1
}
