// Azurite's blob service (npm) on 127.0.0.1, persisted under .stack/azurite. Telemetry is off:
// Azurite phones home by default.

import { mkdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { BlobServiceClient } from '@azure/storage-blob'
import { endpointsFor, paths, type StackOptions } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

const require = createRequire(import.meta.url)

function azuriteBlobMain(): string {
  const pkg = require.resolve('azurite/package.json')
  return join(dirname(pkg), 'dist', 'src', 'blob', 'main.js')
}

export async function startAzurite(options: StackOptions, dir: string): Promise<ServiceRecord> {
  const location = paths(dir).azurite
  rmSync(location, { recursive: true, force: true })
  mkdirSync(location, { recursive: true })
  const record = startService(dir, {
    name: 'azurite',
    command: process.execPath,
    args: [
      azuriteBlobMain(),
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      String(options.ports.azurite),
      '--location',
      location,
      // Newer SDKs send an x-ms-version Azurite does not know yet.
      '--skipApiVersionCheck',
      '--loose',
      '--disableTelemetry',
      '--silent',
    ],
  })
  const { connectionString, container } = endpointsFor(options, dir).azurite
  await waitReady(dir, record, () => containerExists(connectionString, container), 60_000)
  return record
}

/** Ready means the blob API answers; the probe creates the warehouse container on the way. */
async function containerExists(connectionString: string, container: string): Promise<boolean> {
  const client = BlobServiceClient.fromConnectionString(connectionString, { retryOptions: { maxTries: 1 } })
  await client.getContainerClient(container).createIfNotExists({ abortSignal: AbortSignal.timeout(2000) })
  return true
}
