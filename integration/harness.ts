// Helpers for end-to-end tests on the real local stack: endpoints, unique names, and the
// independent pyiceberg reader. Tests call these; they never start or stop the stack themselves
// (integration/run.ts does, and stops what it started even when tests fail).
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type Endpoints, readEndpoints } from './stack/index.ts'

const run = promisify(execFile)

let cached: Endpoints | undefined
export function endpoints(): Endpoints {
  cached ??= readEndpoints()
  return cached
}

/**
 * Why a test of the SASL_SSL listener cannot run (a reason for `skip`), or false when the stack
 * has one. CI starts the stack with it, and a skip fails CI.
 */
export function withoutSaslSsl(): string | false {
  try {
    return endpoints().kafka.secure ? false : 'the stack runs without --kafka-security sasl_ssl'
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * Why a test of the SQL catalog on PostgreSQL cannot run (a reason for `skip`), or false when the
 * stack runs PostgreSQL. CI starts the stack with it, and a skip fails CI.
 */
export function withoutPostgres(): string | false {
  try {
    return endpoints().postgres ? false : 'the stack runs without --postgres'
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** A name no other test run uses: topics, namespaces, tables and blob prefixes. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
}

/**
 * The `kafka:` and `catalog:` sections of a test's floe.yaml on the local stack: its broker, a
 * group prefix and a control topic of the test's own (or the ones given), and the REST catalog.
 */
export function stackConfigYaml(name: string, kafka: { groupPrefix?: string; controlTopic?: string } = {}): string {
  return `kafka:
  brokers: [${endpoints().kafka.bootstrap}]
  groupPrefix: ${kafka.groupPrefix ?? uniqueName('floe')}
  controlTopic: ${kafka.controlTopic ?? uniqueName(`${name}-control`)}
catalog:
  type: rest
  uri: ${endpoints().rest.uri}
`
}

export interface VerifyResult {
  table: string
  metadataLocation: string
  rows: number
  /** Files the scan plans (after --filter pruning). */
  files: number
  /** Data files of the current snapshot, and how many carry lower and upper bounds. */
  dataFiles: number
  filesWithBounds: number
  /** Manifests the current snapshot lists. */
  manifests: number
  schema: string
  spec: string
  snapshots: { id: string; summary: Record<string, string> }[]
  properties: Record<string, string>
  sample?: Record<string, unknown>[]
  ids?: {
    expected: number
    found: number
    missing: number
    duplicated: number
    unexpected: number
    /** A routed read (`ns.prefix*`): ids found in another table than the ids file names. */
    misrouted?: number
  }
  /** A routed read: how many tables it read. */
  tables?: number
  error?: string
}

/** Reads a table whole with pyiceberg (integration/verify) and returns its report. */
export async function verifyTable(
  table: string,
  options: {
    /** `postgres`: pyiceberg's SqlCatalog on the stack's PostgreSQL. */
    catalog?: 'rest' | 'sql' | 'postgres'
    idsFile?: string
    idColumn?: string
    filter?: string
    rows?: number
    /** Binary values of the rows as base64 (byte-exact), not Python's text of them. */
    binaryAsBase64?: boolean
    sqlPath?: string
    /** A REST catalog other than the stack's first (the one on S3). */
    restUri?: string
  } = {},
): Promise<VerifyResult> {
  const args = [table, '--catalog', options.catalog ?? 'rest']
  if (options.idsFile) args.push('--ids-file', options.idsFile, '--id-column', options.idColumn ?? 'id')
  if (options.filter) args.push('--filter', options.filter)
  if (options.rows) args.push('--rows', String(options.rows))
  if (options.binaryAsBase64) args.push('--binary-base64')
  if (options.sqlPath) args.push('--sql-path', options.sqlPath)
  if (options.restUri) args.push('--uri', options.restUri)
  const verify = join(import.meta.dirname, 'verify')
  try {
    const { stdout } = await run(verify, args, { maxBuffer: 64 * 1024 * 1024 })
    return JSON.parse(stdout) as VerifyResult
  } catch (error) {
    // Exit 1 (ids missing or duplicated) still prints the report.
    const stdout = (error as { stdout?: string }).stdout
    if (stdout?.trim().startsWith('{')) return JSON.parse(stdout) as VerifyResult
    throw error
  }
}
