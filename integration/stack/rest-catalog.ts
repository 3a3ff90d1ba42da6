// Apache Iceberg's REST catalog server (RESTCatalogServer from iceberg-open-api's test fixtures):
// a JdbcCatalog on a SQLite file and HadoopFileIO on a file:// warehouse, configured through the
// CATALOG_* environment variables it reads (CATALOG_X_Y -> x.y, CATALOG_X__Y -> x-y).
//
// The fixture has no host option and binds every interface; everything here talks to it on
// 127.0.0.1 only.
import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { classpath, javaCommand } from './jars.ts'
import { paths, type StackOptions } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

export async function startRestCatalog(options: StackOptions, dir: string): Promise<ServiceRecord> {
  const p = paths(dir)
  rmSync(dirname(p.restCatalog), { recursive: true, force: true })
  rmSync(p.warehouse, { recursive: true, force: true })
  mkdirSync(dirname(p.restCatalog), { recursive: true })
  mkdirSync(p.warehouse, { recursive: true })
  const record = startService(dir, {
    name: 'iceberg-rest',
    command: javaCommand(),
    args: [
      '-Xmx512m',
      '-XX:+UseSerialGC',
      // Names the stack folder on the command line, so `down` recognises the pid as ours.
      `-Dfloe.stack=${dir}`,
      '-cp',
      classpath('iceberg-rest', dir),
      'org.apache.iceberg.rest.RESTCatalogServer',
    ],
    env: {
      ...process.env,
      CATALOG_CATALOG__IMPL: 'org.apache.iceberg.jdbc.JdbcCatalog',
      CATALOG_URI: `jdbc:sqlite:${p.restCatalog}`,
      CATALOG_JDBC_SCHEMA__VERSION: 'V1',
      CATALOG_WAREHOUSE: `file://${p.warehouse}`,
      CATALOG_IO__IMPL: 'org.apache.iceberg.hadoop.HadoopFileIO',
      CATALOG_REST_PORT: String(options.ports.rest),
    },
  })
  await waitReady(dir, record, () => restAnswers(options.ports.rest), 90_000)
  return record
}

export async function restAnswers(port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/config`, { signal: AbortSignal.timeout(2000) })
  await response.arrayBuffer()
  return response.ok
}
