// For the tests and the benchmark: a DatasetConfig built by the real configuration code, so the
// schema's field ids, required flags and nested types are what an operator's file would give.
import { type DatasetConfig, parseConfig } from '../../shared/config/index.ts'

export function datasetOf(
  customMapping: Record<string, string>,
  schema: Record<string, string>,
  extra: { name?: string; timestampUnit?: 'seconds' | 'milliseconds' | 'microseconds' } = {},
): DatasetConfig {
  const file = {
    kafka: { brokers: ['127.0.0.1:9092'] },
    catalog: { type: 'rest', uri: 'http://127.0.0.1:8181' },
    ingestion: { wal: { dir: '/tmp/floe-wal-unused' } },
    datasets: [
      {
        name: extra.name ?? 'events',
        topic: 'events',
        table: 'analytics.events',
        customMapping,
        schema,
        badRecords: 'skip',
        ...(extra.timestampUnit ? { timestampUnit: extra.timestampUnit } : {}),
      },
    ],
  }
  // JSON is YAML: the file goes through the same parser and validation as floe.yaml.
  const [dataset] = parseConfig(JSON.stringify(file), 'test', {}).datasets
  if (!dataset) throw new Error('no dataset')
  return dataset
}
