// Calls pyiceberg_probe.py with the stack's Python: pyiceberg is the independent implementation
// these tests hold Floe's catalogs and storage against.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { endpoints } from '../harness.ts'

const run = promisify(execFile)

export interface PyTable {
  metadata_location: string
  format_version: number
  table_uuid: string
  location: string
  schema: { 'schema-id': number; fields: { id: number; name: string; type: unknown; required: boolean }[] }
  spec: { 'spec-id': number; fields: { 'source-id': number; 'field-id': number; name: string; transform: string }[] }
  current_snapshot_id: string | null
  snapshot_ids: string[]
  last_sequence_number: number
  properties: Record<string, string>
}

export async function pyiceberg<T = PyTable>(
  command: 'load' | 'create' | 'append' | 'read',
  args: unknown,
): Promise<T> {
  const script = join(import.meta.dirname, 'pyiceberg_probe.py')
  try {
    const { stdout } = await run(endpoints().python, [script, command, JSON.stringify(args)], {
      maxBuffer: 16 * 1024 * 1024,
    })
    return JSON.parse(stdout) as T
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ''
    throw new Error(`pyiceberg ${command} failed: ${stderr.trim().split('\n').slice(-3).join(' | ')}`, { cause: error })
  }
}

/** load_catalog properties for a pyiceberg SqlCatalog on a SQLite file. */
export function sqlCatalog(path: string, name: string, extra: Record<string, string> = {}): Record<string, string> {
  return { name, type: 'sql', uri: `sqlite:///${path}`, ...extra }
}

/** pyiceberg's fsspec/adlfs FileIO properties for the stack's Azurite. */
export function azuriteFileIo(): Record<string, string> {
  const { connectionString, account } = endpoints().azurite
  return { 'adls.connection-string': connectionString, 'adls.account-name': account }
}

/** The Iceberg location of a blob in the stack's Azurite container. */
export function azuriteLocation(path: string): string {
  const { account, container } = endpoints().azurite
  return `abfs://${container}@${account}.dfs.core.windows.net/${path}`
}

/** load_catalog properties for a pyiceberg SqlCatalog on the stack's PostgreSQL (SQLAlchemy, psycopg2). */
export function postgresCatalog(name: string, extra: Record<string, string> = {}): Record<string, string> {
  const server = endpoints().postgres
  if (!server) throw new Error('the stack has no PostgreSQL: start it with --postgres')
  const credentials = `${encodeURIComponent(server.user)}:${encodeURIComponent(server.password)}`
  const uri = `postgresql+psycopg2://${credentials}@${server.host}:${server.port}/${server.database}`
  return { name, type: 'sql', uri, ...extra }
}
