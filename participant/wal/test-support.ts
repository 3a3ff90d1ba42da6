// Helpers for this folder's tests and the participant's tests of the WAL on the record path:
// temporary folders that clean up after themselves, a settable clock, an event schema with
// several Iceberg partitions, a PartitionLog on it, a shared rotation as a round sees it, a routed
// rotation's claims, and the pyarrow reader.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'
import type { PartitionSpec, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { PartitionLog, type PartitionLogOptions } from './partition-log.ts'
import type { SharedRotation, SharedSegment } from './rotation-manifest.ts'
import type { Clock } from './types.ts'

const stackDirectory = process.env['FLOE_STACK_DIR'] ?? join(import.meta.dirname, '..', '..', '.stack')
const python = join(stackDirectory, 'venv', 'bin', 'python')
const readerScript = join(import.meta.dirname, 'testdata', 'read_segments.py')

/** Options for tests that read files back with pyarrow: skipped, and saying so, without the venv. */
export const needsPyarrow = {
  skip: existsSync(python) ? false : `needs python with pyarrow (the venv ${python}): npm run stack -- setup`,
}

export async function temporaryDirectory(t: TestContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'floe-wal-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  return directory
}

export class SettableClock implements Clock {
  time = 1_000_000
  now(): number {
    return this.time
  }
}

export const eventSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'event_id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: true, type: 'timestamptz' },
    { id: 3, name: 'country', required: true, type: 'string' },
    { id: 4, name: 'user_id', required: false, type: 'long' },
    { id: 5, name: 'amount', required: false, type: 'double' },
    { id: 6, name: 'token', required: false, type: 'binary' },
  ],
}

/** day(ts) and identity(country): rows of several days and countries land in several files. */
export const daysAndCountries: PartitionSpec = {
  'spec-id': 1,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1001, name: 'country', transform: 'identity' },
  ],
}

export const unpartitioned: PartitionSpec = { 'spec-id': 0, fields: [] }

const day = 86_400_000_000n
const epochDay = 19_700n * day

/** Row i of a deterministic stream: `days` distinct days x `countries` distinct countries. */
export function event(i: number, days = 2, countries = 2): StructValue {
  return {
    event_id: BigInt(i),
    ts: epochDay + BigInt(i % days) * day + BigInt(i),
    country: `C${Math.floor(i / days) % countries}`,
    user_id: i % 5 === 0 ? null : 2n ** 60n + BigInt(i),
    amount: i * 1.5,
    token: Uint8Array.of(i & 0xff, (i >> 8) & 0xff),
  }
}

export function events(from: number, count: number, days = 2, countries = 2): StructValue[] {
  return Array.from({ length: count }, (_, k) => event(from + k, days, countries))
}

export interface PyarrowSegment {
  path: string
  numRows: number
  numRowGroups: number
  fieldIds: Record<string, number | null>
  floeMetadata: Record<string, string>
  values: (string | null)[]
}

/** Reads segments with pyarrow, returning `column`'s values as strings. */
export async function readWithPyarrow(column: string, paths: readonly string[]): Promise<PyarrowSegment[]> {
  const { stdout } = await promisify(execFile)(python, [readerScript, column, ...paths], {
    maxBuffer: 64 * 1024 * 1024,
  })
  return JSON.parse(stdout) as PyarrowSegment[]
}

/**
 * A PartitionLog in `dir` for one Kafka partition, on eventSchema partitioned by daysAndCountries,
 * its first range starting at offset 100; `options` adds or overrides the rest.
 */
export function partitionLogIn(
  dir: string,
  kafka: { topic: string; partition: number },
  options: Partial<PartitionLogOptions> = {},
): PartitionLog {
  return new PartitionLog({
    dir,
    ...kafka,
    schema: eventSchema,
    spec: daysAndCountries,
    startOffset: 100n,
    ...options,
  })
}

/** Rotation `R<sequence>` of topic `topic`: per partition its range `[start, end)`, and segments of these UUIDs. */
/** A routed rotation's claims as [table, partition, start, end], in the rotation's order. */
export const claimsOf = (rotation: SharedRotation | undefined) =>
  (rotation?.tables ?? []).flatMap(({ table, claims }) =>
    claims.map((claim) => [table, claim.partition, claim.start, claim.end]),
  )

export function sharedRotation(
  topic: string,
  sequence: number,
  ranges: Record<number, [number, number]>,
  files: string[],
): SharedRotation {
  return {
    id: `R${sequence}`,
    sequence: BigInt(sequence),
    reason: 'commit',
    manifestPath: `/wal/rotation_${sequence}.json`,
    ranges: Object.entries(ranges).map(([partition, [start, end]]) => ({
      topic,
      partition: Number(partition),
      start: BigInt(start),
      end: BigInt(end),
    })),
    segments: files.map((uuid) => ({ uuid }) as SharedSegment),
  }
}
