// For the tests and the benchmark: a DatasetConfig built by the real configuration code, so the
// schema's field ids, required flags and nested types are what an operator's file would give.
import { type DatasetConfig, parseConfig } from '../../shared/config/index.ts'

/** A dataset in raw archive mode (`mode: raw`): the columns are the configuration's own. */
export function rawArchiveOf(): DatasetConfig {
  return parsedDataset({ mode: 'raw' })
}

export function datasetOf(
  customMapping: Record<string, string>,
  schema: Record<string, string>,
  extra: {
    name?: string
    timestampUnit?: 'seconds' | 'milliseconds' | 'microseconds'
    /** The dataset's `route`, as the file would give it. */
    route?: Record<string, unknown>
  } = {},
): DatasetConfig {
  return parsedDataset({
    customMapping,
    schema,
    ...(extra.name ? { name: extra.name } : {}),
    ...(extra.timestampUnit ? { timestampUnit: extra.timestampUnit } : {}),
    ...(extra.route ? { route: extra.route } : {}),
  })
}

/** A dataset that infers its columns (no customMapping, no schema). */
export function inferredOf(keys: Record<string, unknown> = {}): DatasetConfig {
  return parsedDataset(keys)
}

function parsedDataset(keys: Record<string, unknown>): DatasetConfig {
  const file = {
    kafka: { brokers: ['127.0.0.1:9092'] },
    catalog: { type: 'rest', uri: 'http://127.0.0.1:8181' },
    ingestion: { wal: { dir: '/tmp/floe-wal-unused' } },
    datasets: [{ name: 'events', topic: 'events', table: 'analytics.events', badRecords: 'skip', ...keys }],
  }
  // JSON is YAML: the file goes through the same parser and validation as floe.yaml.
  const [dataset] = parseConfig(JSON.stringify(file), 'test', {}).datasets
  if (!dataset) throw new Error('no dataset')
  return dataset
}
