// Apache Iceberg's REST catalog server (RESTCatalogServer from iceberg-open-api's test fixtures):
// a JdbcCatalog on a SQLite file and HadoopFileIO on a file:// warehouse, configured through the
// CATALOG_* environment variables it reads (CATALOG_X_Y -> x.y, CATALOG_X__Y -> x-y). With the
// S3 server up, a second one keeps its warehouse on S3 through Iceberg Java's S3FileIO, as a
// production REST catalog on S3 does: it writes the metadata files, Floe the data and manifests.
//
// The fixture has no host option and binds every interface; everything here talks to it on
// 127.0.0.1 only.
import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { classpath, javaCommand } from './jars.ts'
import { paths, restOnS3Port, type S3Endpoints, type StackOptions } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

export async function startRestCatalog(options: StackOptions, dir: string): Promise<ServiceRecord> {
  const p = paths(dir)
  rmSync(p.warehouse, { recursive: true, force: true })
  mkdirSync(p.warehouse, { recursive: true })
  return startFixture(dir, 'iceberg-rest', p.restCatalog, options.ports.rest, {
    CATALOG_WAREHOUSE: `file://${p.warehouse}`,
    CATALOG_IO__IMPL: 'org.apache.iceberg.hadoop.HadoopFileIO',
  })
}

/** The REST catalog whose warehouse is the S3 server's `rest-warehouse` prefix, in S3FileIO. */
export async function startRestCatalogOnS3(
  options: StackOptions,
  dir: string,
  s3: Omit<S3Endpoints, 'rest'>,
): Promise<ServiceRecord> {
  return startFixture(dir, 'iceberg-rest-s3', paths(dir).restS3Catalog, restOnS3Port(options), {
    CATALOG_WAREHOUSE: restOnS3Warehouse(s3),
    CATALOG_IO__IMPL: 'org.apache.iceberg.aws.s3.S3FileIO',
    CATALOG_S3_ENDPOINT: s3.endpoint,
    CATALOG_S3_PATH__STYLE__ACCESS: 'true',
    CATALOG_S3_ACCESS__KEY__ID: s3.accessKeyId,
    CATALOG_S3_SECRET__ACCESS__KEY: s3.secretAccessKey,
    CATALOG_CLIENT_REGION: s3.region,
    // The AWS SDK would otherwise look for a region and credentials file of the user's own.
    AWS_REGION: s3.region,
  })
}

export function restOnS3Warehouse(s3: Pick<S3Endpoints, 'bucket'>): string {
  return `s3://${s3.bucket}/rest-warehouse`
}

async function startFixture(
  dir: string,
  name: string,
  catalogFile: string,
  port: number,
  storage: NodeJS.ProcessEnv,
): Promise<ServiceRecord> {
  rmSync(dirname(catalogFile), { recursive: true, force: true })
  mkdirSync(dirname(catalogFile), { recursive: true })
  const record = startService(dir, {
    name,
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
      CATALOG_URI: `jdbc:sqlite:${catalogFile}`,
      CATALOG_JDBC_SCHEMA__VERSION: 'V1',
      CATALOG_REST_PORT: String(port),
      ...storage,
    },
  })
  await waitReady(dir, record, () => restAnswers(port), 90_000)
  return record
}

export async function restAnswers(port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/config`, { signal: AbortSignal.timeout(2000) })
  await response.arrayBuffer()
  return response.ok
}
