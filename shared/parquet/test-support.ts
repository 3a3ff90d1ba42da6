// Helpers for this folder's tests only: a temporary directory that cleans up after itself, the
// pyarrow/pyiceberg reader script, and the canonical value form that script prints.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'
import {
  decimalParams,
  type IcebergType,
  type IcebergValue,
  isPrimitive,
  type Schema,
  type StructValue,
} from '../iceberg/index.ts'
import { compareUtf8 } from './bounds.ts'
import type { OpenDataFileOptions } from './data-file.ts'
import { openDataFile } from './data-file-writer.ts'
import type { DataFileMetrics } from './metrics.ts'

// the local stack's venv (integration/stack), which has pyarrow, pyiceberg and duckdb
const stackDirectory = process.env['FLOE_STACK_DIR'] ?? join(import.meta.dirname, '..', '..', '.stack')
export const python = join(stackDirectory, 'venv', 'bin', 'python')

/** Options for tests that read files back with pyarrow: skipped, and saying so, without the stack's venv. */
export const needsPyarrow = {
  skip: existsSync(python) ? false : `needs python with pyarrow (the venv ${python}): npm run stack -- setup`,
}
const readerScript = join(import.meta.dirname, 'testdata', 'read_parquet.py')

export async function temporaryDirectory(t: TestContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'floe-parquet-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  return directory
}

export async function writeDataFile(
  options: OpenDataFileOptions,
  batches: readonly (readonly StructValue[])[],
): Promise<DataFileMetrics> {
  const writer = await openDataFile(options)
  for (const batch of batches) await writer.append(batch)
  return writer.close()
}

export interface PyarrowChunk {
  path: string
  codec: string
  encodings: string[]
  numValues: number
  totalCompressedSize: number
  fileOffset: number
  dataPageOffset: number
  dictionaryPageOffset: number | null
  bloomFilterOffset: number | null
  bloomFilterLength: number | null
  statistics: { hasMinMax: boolean; min: unknown; max: unknown; nullCount: number | null } | null
}

export interface PyarrowField {
  name: string
  fieldId: number | null
  nullable: boolean
  arrowType: string
  children?: PyarrowField[]
  element?: PyarrowField
  key?: PyarrowField
  value?: PyarrowField
}

export interface PyarrowView {
  numRows: number
  numRowGroups: number
  createdBy: string
  keyValueMetadata: Record<string, string>
  fields: PyarrowField[]
  leaves: {
    path: string
    physicalType: string
    logicalType: Record<string, unknown>
    convertedType: string
    length: number
    precision: number
    scale: number
  }[]
  rowGroups: { numRows: number; columns: PyarrowChunk[] }[]
  rows: Record<string, unknown>[]
  iceberg?: {
    recordCount: string
    columnSizes: Record<string, string>
    valueCounts: Record<string, string>
    nullValueCounts: Record<string, string>
    lowerBounds: Record<string, unknown>
    upperBounds: Record<string, unknown>
    splitOffsets: string[]
  }
}

/** Reads the file with pyarrow; with a schema, also derives Iceberg metrics with pyiceberg. */
export async function readWithPyarrow(path: string, schema?: Schema): Promise<PyarrowView> {
  const args = [readerScript, path]
  if (schema) {
    const schemaPath = `${path}.schema.json`
    await writeFile(schemaPath, JSON.stringify(schema))
    args.push(schemaPath)
  }
  const { stdout } = await promisify(execFile)(python, args, { maxBuffer: 512 * 1024 * 1024 })
  return JSON.parse(stdout) as PyarrowView
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

function canonicalFloat(value: number): number | string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return 'Infinity'
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity'
  return value
}

/** The form read_parquet.py prints for a value of an Iceberg type. */
export function canonical(value: IcebergValue | undefined, type: IcebergType): unknown {
  if (value === null || value === undefined) return null
  if (isPrimitive(type)) {
    if (type === 'boolean' || type === 'string') return value
    if (type === 'float') return canonicalFloat(Math.fround(value as number))
    if (type === 'double') return canonicalFloat(value as number)
    if (value instanceof Uint8Array) return hex(value)
    return String(value)
  }
  if (type.type === 'struct') {
    const struct = value as StructValue
    return Object.fromEntries(type.fields.map((field) => [field.name, canonical(struct[field.name], field.type)]))
  }
  if (type.type === 'list') return (value as IcebergValue[]).map((item) => canonical(item, type.element))
  return [...(value as Map<IcebergValue, IcebergValue>)].map(([k, v]) => [
    canonical(k, type.key),
    canonical(v, type.value),
  ])
}

/** Orders canonical values of a primitive type the way Iceberg orders the values themselves. */
export function compareCanonical(type: IcebergType, left: unknown, right: unknown): number {
  if (type === 'string') return compareUtf8(left as string, right as string)
  if (type === 'float' || type === 'double') return (left as number) - (right as number)
  if (type === 'boolean') return Number(left) - Number(right)
  if (type === 'uuid' || type === 'binary' || (typeof type === 'string' && type.startsWith('fixed'))) {
    return (left as string) < (right as string) ? -1 : (left as string) > (right as string) ? 1 : 0
  }
  const difference = BigInt(left as string) - BigInt(right as string)
  return difference < 0n ? -1 : difference > 0n ? 1 : 0
}

/** A small deterministic generator, so a failing case can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function isDecimal(type: IcebergType): boolean {
  return typeof type === 'string' && decimalParams(type) !== undefined
}
