// For the CLI's tests: a config file of one dataset on the SQL catalog, the warehouse and the WAL
// under a test's folder. Kafka is named, never reached by the commands that use it.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** Writes `floe.yaml` in `dir` with `datasets` (YAML lines under `datasets:`); its path. */
export async function writeSqlConfig(dir: string, datasets: string): Promise<string> {
  const config = join(dir, 'floe.yaml')
  await writeFile(
    config,
    `kafka: {brokers: [127.0.0.1:9092]}
catalog: {type: sql, path: ${join(dir, 'catalog.db')}, warehouse: file://${dir}/warehouse}
ingestion: {wal: {dir: ${join(dir, 'wal')}}}
datasets:
${datasets}`,
  )
  return config
}
